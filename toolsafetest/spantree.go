package toolsafetest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/otelhook"
)

// TreeOption configures WriteSpanTree.
type TreeOption interface {
	apply(*treeConfig)
}

type treeConfig struct {
	durations bool
}

type treeOption func(*treeConfig)

func (f treeOption) apply(c *treeConfig) { f(c) }

// WithoutDurations leaves the spans' durations out of the tree, so that the
// same calls always print the same text: for an Example's // Output: or a
// golden file. The delays of retry events are kept: they come from the
// backoff, not from the clock.
func WithoutDurations() TreeOption {
	return treeOption(func(c *treeConfig) { c.durations = false })
}

// WriteSpanTree writes spans to w as an indented tree, one trace after the
// other: each span with its duration (rounded to 10ms from a second up, to
// 1ms from a millisecond up, else to 1µs) and its outcome, then its child
// spans and its span events, two spaces deeper, in the order they happened.
// A span whose parent is not among spans is a root; roots are in the order
// they started. For toolsafe's spans (package otelhook) the outcome of a
// call is its summary ("ok after 2 attempts"); of a failed call, its error
// type and number of attempts, or, when no attempt was made, its error type
// and the model's message; of an attempt, its error type and reason. The
// model's tool-call ID follows in brackets when known. A retry event shows
// the attempt that failed, the delay before the next one (otelhook.DelayKey)
// and why:
//
//	execute_tool fetch_invoice  1.52s  ok after 2 attempts
//	  attempt 1  2ms  tool-failed: the connection was reset
//	  · retry after attempt 1, delay 500ms (tool-failed)
//	  attempt 2  1ms
//	execute_tool fetch_invoice  61µs  tool-error after 1 attempt
//	  attempt 1  41µs  tool-error: "1002" is not an invoice number
//
// Give it the ended spans of a tracetest.SpanRecorder (Ended) or the spans
// of a tracetest.InMemoryExporter (GetSpans().Snapshots()). It writes
// nothing for no spans, and returns the first error from w.
func WriteSpanTree(w io.Writer, spans []sdktrace.ReadOnlySpan, opts ...TreeOption) error {
	c := treeConfig{durations: true}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	kids := make(map[trace.SpanID][]sdktrace.ReadOnlySpan)
	for _, s := range spans {
		if s.Parent().IsValid() {
			kids[s.Parent().SpanID()] = append(kids[s.Parent().SpanID()], s)
		}
	}
	ew := &errWriter{w: w}
	for _, r := range roots(spans) {
		c.writeSpan(ew, r, kids, 0)
	}
	return ew.err
}

// errWriter keeps the first error of w and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) println(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s+"\n")
	}
}

// roots are the spans whose parent is not among spans, by start time.
func roots(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	ids := make(map[trace.SpanID]bool, len(spans))
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	var rs []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if !s.Parent().IsValid() || !ids[s.Parent().SpanID()] {
			rs = append(rs, s)
		}
	}
	slices.SortStableFunc(rs, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return rs
}

func (c treeConfig) writeSpan(w *errWriter, s sdktrace.ReadOnlySpan, kids map[trace.SpanID][]sdktrace.ReadOnlySpan, depth int) {
	indent := strings.Repeat("  ", depth)
	line := indent + s.Name()
	if c.durations {
		line += "  " + round(s.EndTime().Sub(s.StartTime())).String()
	}
	if d := describe(s); d != "" {
		line += "  " + d
	}
	w.println(line)

	// Children and events, in the order they happened.
	type item struct {
		at    time.Time
		span  sdktrace.ReadOnlySpan
		event *sdktrace.Event
	}
	var items []item
	for _, k := range kids[s.SpanContext().SpanID()] {
		items = append(items, item{at: k.StartTime(), span: k})
	}
	for i := range s.Events() {
		e := s.Events()[i]
		items = append(items, item{at: e.Time, event: &e})
	}
	slices.SortStableFunc(items, func(a, b item) int { return a.at.Compare(b.at) })
	for _, it := range items {
		if it.span != nil {
			c.writeSpan(w, it.span, kids, depth+1)
			continue
		}
		w.println(indent + "  · " + it.event.Name + describeEvent(it.event.Attributes))
	}
}

// describe is a span's outcome: toolsafe's summary or the attempt's error
// type and reason, and the tool-call ID.
func describe(s sdktrace.ReadOnlySpan) string {
	get := func(k attribute.Key) (attribute.Value, bool) { return lookup(s.Attributes(), k) }
	var parts []string
	summary, hasSummary := get(otelhook.SummaryKey)
	errType, failed := get(semconv.ErrorTypeKey)
	attempts, _ := get(otelhook.AttemptsKey)
	switch {
	case hasSummary && failed && attempts.AsInt64() > 0:
		// The attempts below say why each failed; the model's message
		// would say it again.
		parts = append(parts, fmt.Sprintf("%s after %s", errType.AsString(), plural(attempts.AsInt64(), "attempt")))
	case hasSummary && failed:
		parts = append(parts, errType.AsString()+": "+summary.AsString())
	case hasSummary:
		parts = append(parts, summary.AsString())
	case failed:
		p := errType.AsString()
		if r, ok := get(otelhook.ReasonKey); ok {
			p += ": " + r.AsString()
		}
		if a, ok := get(otelhook.AttemptAbandonedKey); ok && a.AsBool() {
			p += " (abandoned: the tool was still running)"
		}
		parts = append(parts, p)
	case s.Status().Code == codes.Error:
		parts = append(parts, "error")
	}
	if v, ok := get(otelhook.SideEffectKey); ok {
		parts = append(parts, "side effect "+v.AsString())
	}
	if v, ok := get(semconv.GenAIToolCallIDKey); ok {
		parts = append(parts, "["+v.AsString()+"]")
	}
	return strings.Join(parts, "  ")
}

func describeEvent(kvs []attribute.KeyValue) string {
	var b strings.Builder
	for _, kv := range kvs {
		switch kv.Key {
		case otelhook.AttemptKey:
			fmt.Fprintf(&b, " after attempt %d", kv.Value.AsInt64())
		case otelhook.DelayKey:
			fmt.Fprintf(&b, ", delay %s", round(time.Duration(kv.Value.AsFloat64()*float64(time.Second))))
		case semconv.ErrorTypeKey:
			fmt.Fprintf(&b, " (%s)", kv.Value.AsString())
		default:
			fmt.Fprintf(&b, " %s=%s", strings.TrimPrefix(string(kv.Key), "toolsafe."), kv.Value.String())
		}
	}
	return b.String()
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func lookup(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	default:
		return d.Round(time.Microsecond)
	}
}
