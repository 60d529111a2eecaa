package otelhook

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/middleware"
)

// What a span or a measurement needs and does not change from call to call
// is made once, here, rather than at each call: tracing should cost little
// more than its spans (see BenchmarkSpans in package bench).

// toolTrace is what the call spans and metrics of one tool share, made when
// CallSpan wraps the tool. The wrapper keeps the tool's Name and
// Description from then on (middleware.Func), so these do not go stale.
type toolTrace struct {
	name       string
	spanName   string                  // "execute_tool {name}"
	replayName string                  // "replay_tool {name}"
	start      []trace.SpanStartOption // the span kind and the tool's attributes
	toolAttr   attribute.KeyValue      // gen_ai.tool.name
	typeAttr   attribute.KeyValue      // gen_ai.tool.type
	byTool     []metric.AddOption      // the metric attribute set {tool}

	ok       outcomeOpts
	replayed outcomeOpts
	failures sync.Map // middleware.Kind → *outcomeOpts, made on first use
}

// outcomeOpts are the options of the calls and duration measurements of one
// outcome: the metric attribute set {tool, outcome}, and the set of
// gen_ai.execute_tool.duration, {tool, tool type, error.type when it
// failed}, nil for a call that is no tool execution (a replay).
type outcomeOpts struct {
	add     []metric.AddOption
	record  []metric.RecordOption
	execute []metric.RecordOption
}

func newToolTrace(t tools.Tool) *toolTrace {
	name := t.Name()
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(name),
		semconv.GenAIToolType("function"),
	}
	if d := t.Description(); d != "" {
		attrs = append(attrs, semconv.GenAIToolDescription(d))
	}
	tt := &toolTrace{
		name:       name,
		spanName:   "execute_tool " + name,
		replayName: "replay_tool " + name,
		start: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attrs...),
		},
		toolAttr: attrs[1],
		typeAttr: attrs[2],
		byTool:   []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs[1]))},
	}
	tt.ok = tt.newOutcome("ok")
	tt.replayed = tt.newOutcome(outcomeReplayed)
	tt.replayed.execute = nil // no tool ran: not an execution
	return tt
}

// newOutcome makes the options of outcome: "ok", "replayed" or a failure's
// Kind. As on the call span, error.type is the Kind of a failure other than
// an approval pause or the caller's cancellation.
func (tt *toolTrace) newOutcome(outcome string) outcomeOpts {
	o := metric.WithAttributeSet(attribute.NewSet(tt.toolAttr, OutcomeKey.String(outcome)))
	exec := []attribute.KeyValue{tt.toolAttr, tt.typeAttr}
	switch middleware.Kind(outcome) {
	case "ok", outcomeReplayed, middleware.KindApprovalRequired, middleware.KindCanceled:
	default:
		exec = append(exec, semconv.ErrorTypeKey.String(outcome))
	}
	return outcomeOpts{
		add:     []metric.AddOption{o},
		record:  []metric.RecordOption{o},
		execute: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(exec...))},
	}
}

// outcome returns the options of the outcome of the call that ended with
// r: "ok", "replayed" (answered from the run ledger), else the failure's
// Kind.
func (tt *toolTrace) outcome(r middleware.Result) *outcomeOpts {
	f := r.Failure
	switch {
	case f == nil && r.Replayed:
		return &tt.replayed
	case f == nil:
		return &tt.ok
	}
	if o, ok := tt.failures.Load(f.Kind); ok {
		return o.(*outcomeOpts)
	}
	o := tt.newOutcome(string(f.Kind))
	actual, _ := tt.failures.LoadOrStore(f.Kind, &o)
	return actual.(*outcomeOpts)
}

type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

// attemptStarts are the names and start options of the first attempt spans;
// later attempts make theirs at each call.
var attemptStarts = func() (s [16]spanStart) {
	for i := range s {
		s[i] = newAttemptStart(i + 1)
	}
	return s
}()

// attemptStart returns the name "attempt {n}" and the start options of
// attempt n's span.
func attemptStart(n int) spanStart {
	if n >= 1 && n <= len(attemptStarts) {
		return attemptStarts[n-1]
	}
	return newAttemptStart(n)
}

func newAttemptStart(n int) spanStart {
	return spanStart{
		name: "attempt " + strconv.Itoa(n),
		opts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(AttemptKey.Int(n)),
		},
	}
}

// okSummaries are the summaries of successful calls that made up to 16
// attempts and had no fallback.
var okSummaries = func() (s [17]string) {
	for n := range s {
		s[n] = "ok after " + plural(n, "attempt")
	}
	return s
}()

// okEnds are the attributes a successful call's span that made up to 16
// attempts ends with, beside its IDs, when it had no fallback, abandoned no
// attempt and records no content: the same for every tool, so made once.
var okEnds = func() (s [len(okSummaries)][]attribute.KeyValue) {
	for n := range s {
		s[n] = []attribute.KeyValue{AttemptsKey.Int(n), AbandonedKey.Int(0), SummaryKey.String(okSummaries[n])}
	}
	return s
}()

// providerCache keeps what was made from the last provider used (a tracer,
// the instruments), so that resolving the global provider at each call
// costs a load and a comparison: it runs three times on every traced call
// (see BenchmarkSuccess/toolsafe-traced in package bench), so whether the
// provider's type can be compared is asked once, when the entry is made,
// not at each call. A provider whose type cannot be compared is asked again
// at each call.
type providerCache[P, V any] struct {
	last atomic.Pointer[providerEntry[P, V]]
}

type providerEntry[P, V any] struct {
	provider   any  // the P, held as an interface to compare
	comparable bool // whether provider's dynamic type can be compared
	v          V
}

// get returns what newV made from p if p is the provider used last, else
// calls newV now and keeps its result for p.
func (c *providerCache[P, V]) get(p P, newV func(P) V) V {
	// Comparing interfaces whose dynamic types differ is false, and one
	// that is comparable is compared without panicking: p's type need not
	// be checked.
	if e := c.last.Load(); e != nil && e.comparable && e.provider == any(p) {
		return e.v
	}
	v := newV(p)
	t := reflect.TypeOf(p)
	c.last.Store(&providerEntry[P, V]{provider: p, comparable: t != nil && t.Comparable(), v: v})
	return v
}
