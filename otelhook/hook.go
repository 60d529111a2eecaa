package otelhook

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/middleware"
)

// Hook makes the tracing layers of toolsafe tools and records their
// metrics. Make one with New and give it to toolsafe.WithTracing; one Hook
// can serve every tool. It is safe for concurrent use, and its
// configuration never changes after New. The zero Hook is ready to use: it
// is New() with no options in an environment without ContentEnv.
type Hook struct {
	cfg     config
	tracers providerCache[trace.TracerProvider, trace.Tracer]
	meters  providerCache[metric.MeterProvider, *instruments]
}

// New returns a Hook configured by opts. With no options it uses the global
// tracer and meter providers, looked up at each call, and records the
// tools' arguments and results only if ContentEnv, read now, says so.
func New(opts ...Option) *Hook {
	h := &Hook{}
	h.cfg.args = contentFromEnv()
	h.cfg.results = h.cfg.args
	for _, o := range opts {
		if o != nil {
			o.apply(&h.cfg)
		}
	}
	return h
}

// tracer returns the tracer of the configured provider, else of the global
// one as it is now; the tracer of the provider used last is kept.
func (h *Hook) tracer() trace.Tracer {
	tp := h.cfg.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return h.tracers.get(tp, newTracer)
}

func newTracer(tp trace.TracerProvider) trace.Tracer {
	return tp.Tracer(ScopeName, trace.WithSchemaURL(SchemaURL))
}

// instruments returns the instruments of the configured meter provider,
// else of the global one as it is now; those of the provider used last are
// kept.
func (h *Hook) instruments() *instruments {
	mp := h.cfg.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return h.meters.get(mp, newInstruments)
}

// CallSpan returns the middleware of the call span: one span
// "execute_tool {tool}" around the whole logical call, outermost, with its
// retry, fallback and breaker events and the call metrics. It reads the
// outcome from the call record in the context (call.From), which
// it starts when the context carries none for this tool.
// toolsafe.WithTracing places it; use it directly only to build a stack by
// hand.
func (h *Hook) CallSpan() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		tt := newToolTrace(next)
		return middleware.Func(tt.name, next.Description(), func(ctx context.Context, input string) (string, error) {
			return h.call(ctx, next, tt, input)
		})
	}
}

// callSpan is one call's span and what its events need. It is the call's
// observer (call.Observer), so one allocation serves the call's
// every event, and it holds room for the call's IDs, which a successful
// call's span ends with beside attributes made once (okEnds).
type callSpan struct {
	span      trace.Span
	ctx       context.Context // the span's
	inst      *instruments
	tt        *toolTrace
	c         *call.Call
	input     string
	truncated truncation // the content attributes cut at the limit
	joined    string     // the identical call in flight whose outcome it shares
	ids       [2]attribute.KeyValue
}

// truncation says which content attributes were cut at the content limit.
type truncation uint8

const (
	truncatedArgs truncation = 1 << iota
	truncatedResult
)

// keys are the names of the attributes cut, arguments first.
func (t truncation) keys() []string {
	keys := make([]string, 0, 2)
	if t&truncatedArgs != 0 {
		keys = append(keys, string(semconv.GenAIToolCallArgumentsKey))
	}
	if t&truncatedResult != 0 {
		keys = append(keys, string(semconv.GenAIToolCallResultKey))
	}
	return keys
}

var _ call.Observer = (*callSpan)(nil)

func (h *Hook) call(ctx context.Context, next tools.Tool, tt *toolTrace, input string) (string, error) {
	c := call.From(ctx)
	if c == nil || c.Tool() != tt.name {
		// Called without toolsafe's root, or on another call's context:
		// this call needs a record of its own.
		ctx, c = call.Begin(ctx, tt.name, "", input, nil)
	}
	cs := &callSpan{inst: h.instruments(), tt: tt, c: c, input: input}
	start := time.Now()
	ctx, cs.span = h.startSpan(ctx, tt.spanName, tt.start)
	cs.ctx = ctx
	ended := false
	defer func() {
		if !ended { // a panic went through: the span ends all the same
			cs.span.SetAttributes(h.callAttrs(cs, nil)...)
			cs.span.End()
		}
	}()
	call.Observe(ctx, cs)

	out, err := next.Call(ctx, input)

	r := c.Result(ctx, out, err)
	h.endCall(cs, r, out)
	ended = true
	cs.span.End()
	cs.measure(r, spanDuration(cs.span, start))
	return out, err
}

// spanDuration is the duration of span, which has ended: the SDK's own
// start and end times when it is an SDK span, so that
// gen_ai.execute_tool.duration is the span's duration as the GenAI
// conventions ask; else the time since start.
func spanDuration(span trace.Span, start time.Time) time.Duration {
	if ro, ok := span.(interface {
		StartTime() time.Time
		EndTime() time.Time
	}); ok {
		if s, e := ro.StartTime(), ro.EndTime(); !s.IsZero() && !e.IsZero() {
			return e.Sub(s)
		}
	}
	return time.Since(start)
}

// callAttrs appends to attrs the attributes of this one call (its IDs and,
// when they are recorded, its arguments). The span starts with its tool's
// attributes only, made once per tool, and gets these with the rest when
// it ends: one SetAttributes on the span, not a start option made per
// call (BenchmarkSuccess/toolsafe-traced in package bench). A sampler
// therefore sees the tool's attributes, not the call's.
func (h *Hook) callAttrs(cs *callSpan, attrs []attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs, CallIDKey.String(cs.c.ID()))
	if cs.c.IDKnown() {
		attrs = append(attrs, semconv.GenAIToolCallID(cs.c.ID()))
	}
	if h.cfg.args {
		v, cut := contentValue(cs.input, h.cfg.contentLimit())
		attrs = append(attrs, attribute.KeyValue{Key: semconv.GenAIToolCallArgumentsKey, Value: v})
		if cut {
			cs.truncated |= truncatedArgs
		}
	}
	return attrs
}

// endCall sets the attributes and status of the call span from r, the
// call's outcome, whose answer was out.
func (h *Hook) endCall(cs *callSpan, r middleware.Result, out string) {
	span, f := cs.span, r.Failure
	if f == nil && !r.Replayed && r.Fallback == "" && r.Abandoned == 0 && !h.cfg.args && !h.cfg.results &&
		r.Attempts >= 0 && r.Attempts < len(okEnds) {
		// The success path (BenchmarkSuccess/toolsafe-traced in package
		// bench): the call's IDs, then attributes made once.
		span.SetAttributes(h.callAttrs(cs, cs.ids[:0])...)
		span.SetAttributes(okEnds[r.Attempts]...)
		return
	}
	end := append(h.callAttrs(cs, make([]attribute.KeyValue, 0, 12)),
		AttemptsKey.Int(r.Attempts),
		AbandonedKey.Int(r.Abandoned))
	if r.Fallback != "" {
		end = append(end, FallbackKey.String(r.Fallback))
	}
	if f != nil && f.SideEffect == middleware.SideEffectUnknown {
		end = append(end, SideEffectKey.String(f.SideEffect.String()))
	}
	msg := ""
	if f != nil {
		msg = f.MessageWithoutArguments()
		if h.cfg.args {
			msg = f.Error()
		}
	}
	switch {
	case f == nil && r.Replayed:
		// No tool ran: a replay is not reported as a tool execution.
		span.SetName(cs.tt.replayName)
		end = append(end, semconv.GenAIOperationNameKey.String(ReplayOperation),
			ReplayedKey.Bool(true),
			SummaryKey.String(replaySummary(r.Fallback, cs.joined)))
		end = h.result(cs, end, out)
	case f == nil:
		end = append(end, SummaryKey.String(okSummary(cs.tt.name, r.Attempts, r.Fallback)))
		end = h.result(cs, end, out)
	case f.Kind == middleware.KindApprovalRequired:
		end = append(end, SummaryKey.String(msg))
		span.AddEvent(eventApprovalRequired)
	case f.Kind == middleware.KindCanceled:
		end = append(end, SummaryKey.String(msg))
		span.AddEvent(eventCanceled, trace.WithAttributes(CancelCauseKey.String(cancelCause(cs.ctx, f))))
	default:
		end = append(end,
			SummaryKey.String(msg),
			semconv.ErrorTypeKey.String(string(f.Kind)),
			RetryableKey.Bool(f.Retryable))
		span.SetStatus(codes.Error, msg)
	}
	if cs.truncated != 0 {
		end = append(end, TruncatedKey.StringSlice(cs.truncated.keys()))
	}
	span.SetAttributes(end...)
}

// result appends the call's answer to end when results are recorded.
func (h *Hook) result(cs *callSpan, end []attribute.KeyValue, out string) []attribute.KeyValue {
	if !h.cfg.results {
		return end
	}
	v, cut := contentValue(out, h.cfg.contentLimit())
	if cut {
		cs.truncated |= truncatedResult
	}
	return append(end, attribute.KeyValue{Key: semconv.GenAIToolCallResultKey, Value: v})
}

// measure records the call's metrics: a call the caller canceled is
// measured all the same.
func (cs *callSpan) measure(r middleware.Result, took time.Duration) {
	// A context that can never be canceled needs no detaching.
	mctx := cs.ctx
	if mctx.Done() != nil {
		mctx = context.WithoutCancel(mctx)
	}
	outcome := cs.tt.outcome(r) // "ok", "replayed" or the failure's Kind
	cs.inst.calls.Add(mctx, 1, outcome.add...)
	if r.Attempts > 0 {
		cs.inst.attempts.Add(mctx, int64(r.Attempts), cs.tt.byTool...)
	}
	cs.inst.duration.Record(mctx, took.Seconds(), outcome.record...)
	if outcome.execute != nil {
		cs.inst.execute.Record(mctx, took.Seconds(), outcome.execute...)
	}
}

// OnEvent turns the call's events into span events and metrics.
func (cs *callSpan) OnEvent(e call.Event) {
	switch e := e.(type) {
	case call.RetryScheduled:
		kind, _ := middleware.Classify(e.Err)
		cs.span.AddEvent(eventRetry, trace.WithAttributes(
			AttemptKey.Int(e.Attempt),
			DelayKey.Float64(e.Delay.Seconds()),
			semconv.ErrorTypeKey.String(string(kind))))
	case call.AttemptAbandoned:
		cs.inst.abandoned.Add(cs.ctx, 1, cs.tt.byTool...)
	case call.AbandonedReturned:
		// Maybe long after the call.
		cs.inst.abandoned.Add(context.WithoutCancel(cs.ctx), -1, cs.tt.byTool...)
	case call.Replayed:
		if e.Joined == "" {
			cs.span.AddEvent(eventReplayed)
			break
		}
		cs.joined = e.Joined
		cs.span.AddEvent(eventReplayed, trace.WithAttributes(semconv.GenAIToolCallIDKey.String(e.Joined)))
	case call.FallbackRouted:
		cs.span.AddEvent(eventFallback, trace.WithAttributes(FallbackKey.String(e.To)))
	case call.BreakerStateChanged:
		kv := []attribute.KeyValue{BreakerKey.String(e.Breaker), BreakerFromKey.String(e.From), BreakerToKey.String(e.To)}
		cs.span.AddEvent(eventBreakerStateChange, trace.WithAttributes(kv...))
		cs.inst.breaker.Add(cs.ctx, 1, metric.WithAttributes(append(kv, cs.tt.toolAttr)...))
	}
}

// okSummary is the summary of a successful call: toolsafe's own words,
// never the tool's output.
func okSummary(tool string, attempts int, alt string) string {
	switch {
	case alt != "":
		return "ok: answered by the fallback tool " + alt + " after " + plural(attempts, "attempt") + " on " + tool
	case attempts >= 0 && attempts < len(okSummaries):
		return okSummaries[attempts]
	default:
		return "ok after " + plural(attempts, "attempt")
	}
}

// replaySummary is the summary of a call answered from the run ledger, or
// by the identical call joined, in flight when it was made.
func replaySummary(alt, joined string) string {
	if joined != "" {
		return "replayed: the identical call " + joined + " was in flight, and this call shares its answer: the tool was not called again"
	}
	if alt != "" {
		return "replayed from the run ledger (the fallback tool " + alt + " had answered): the tool was not called again"
	}
	return "replayed from the run ledger: the tool was not called again"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func cancelCause(ctx context.Context, f *middleware.Failure) string {
	err := ctx.Err()
	if err == nil {
		err = f.Cause
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "deadline_exceeded"
	}
	return "canceled"
}

// AttemptSpan returns the middleware of the attempt span: one child span
// "attempt {n}" per attempt, started inside the attempt timeout (which
// numbers the attempts, see middleware.AttemptNumber), around the panic
// recovery and the tool. toolsafe.WithTracing places it; use it directly
// only to build a stack by hand.
func (h *Hook) AttemptSpan() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			return h.attempt(ctx, next, input)
		})
	}
}

// AttemptHook returns the hook of the attempt span, for the attempt timeout
// (layer.WithAttemptHook): one child span "attempt {n}" per attempt,
// started on the caller's goroutine as the attempt timeout numbers the
// attempt, and ended when the attempt ends for its caller (when the tool
// returns, or when the attempt timeout gives up on it). toolsafe.WithTracing
// uses it; AttemptSpan is the same span as a layer of its own, for a stack
// built by hand.
func (h *Hook) AttemptHook() layer.AttemptHook { return attemptHook{h} }

type attemptHook struct{ h *Hook }

// Begin starts the span of attempt n.
func (ah attemptHook) Begin(ctx context.Context, n int) (context.Context, layer.AttemptEnd) {
	a := &attemptSpan{n: n}
	st := attemptStart(n)
	a.ctx, a.span = ah.h.tracer().Start(ctx, st.name, st.opts...)
	return a.ctx, a
}

// End ends the span of an attempt that returned err, or that the attempt
// timeout abandoned.
func (a *attemptSpan) End(err error, abandoned bool) {
	if !abandoned {
		a.end(err)
		return
	}
	kind, retryable := middleware.Classify(err)
	if k, r, ok := endedBy(a.ctx); ok {
		kind, retryable = k, r
	}
	a.finish(failedAttempt(kind, retryable, call.AttemptCutText(a.ctx, err), AttemptAbandonedKey.Bool(true)), kind)
}

// attemptSpan is one attempt's span. It ends once: when the tool returns,
// or when the attempt timeout gives up on it, whichever comes first. It is
// the attempt's observer, to learn the latter.
type attemptSpan struct {
	span trace.Span
	ctx  context.Context // the span's
	n    int
	once sync.Once
}

var _ call.Observer = (*attemptSpan)(nil)

// attempt runs one attempt inside its span. The attempt runs on a goroutine
// of its own, whose stack starts small: the span is started and ended by
// functions of their own so that this frame, below the tool's, stays small
// too.
func (h *Hook) attempt(ctx context.Context, next tools.Tool, input string) (string, error) {
	a := h.startAttempt(ctx)
	out, err := next.Call(a.ctx, input)
	a.end(err)
	return out, err
}

// startAttempt starts the span of the attempt running in ctx and makes it
// an observer of the call, to learn if the attempt is abandoned.
func (h *Hook) startAttempt(ctx context.Context) *attemptSpan {
	n := middleware.AttemptNumber(ctx)
	if n == 0 {
		n = 1 // no attempt timeout layer: a single attempt
	}
	a := &attemptSpan{n: n}
	st := attemptStart(n)
	a.ctx, a.span = h.tracer().Start(ctx, st.name, st.opts...)
	call.Observe(ctx, a)
	return a
}

// end ends the span of an attempt that returned err.
func (a *attemptSpan) end(err error) {
	if err == nil {
		a.finish(nil, "")
		return
	}
	kind, retryable := middleware.Classify(err)
	if kind == middleware.KindApprovalRequired {
		// A pause is not an error.
		a.span.AddEvent(eventApprovalRequired)
		a.finish(nil, "")
		return
	}
	if k, r, ok := endedBy(a.ctx); ok {
		kind, retryable = k, r
	}
	reason := call.AttemptCutText(a.ctx, err) // a limit's name, never "a network timeout"
	if reason == "" {
		reason = middleware.Reason(err)
	}
	attrs := failedAttempt(kind, retryable, reason)
	if et := errorType(err); et != "" {
		attrs[0] = semconv.ErrorTypeKey.String(et) // failedAttempt puts error.type first
	}
	a.finish(attrs, kind)
}

// errorType is the error.type an error in err's chain names itself, with a
// method ErrorType() string (mcptools' errors name theirs as the MCP
// conventions do: "tool_error", a JSON-RPC code), or "".
func errorType(err error) string {
	var et interface{ ErrorType() string }
	if errors.As(err, &et) {
		return et.ErrorType()
	}
	return ""
}

// finish ends the span, with attrs and, unless kind is "" or canceled (the
// caller's cancellation is nobody's error), an error status, unless it has
// ended already.
func (a *attemptSpan) finish(attrs []attribute.KeyValue, kind middleware.Kind) {
	a.once.Do(func() {
		a.span.SetAttributes(attrs...)
		if kind != "" && kind != middleware.KindCanceled {
			a.span.SetStatus(codes.Error, string(kind))
		}
		a.span.End()
	})
}

// OnEvent ends the span when its attempt is the one abandoned.
func (a *attemptSpan) OnEvent(e call.Event) {
	ab, ok := e.(call.AttemptAbandoned)
	if !ok || ab.Attempt != a.n {
		return
	}
	kind, retryable := middleware.KindTimeout, true
	if k, r, ok := endedBy(a.ctx); ok {
		kind, retryable = k, r
	}
	a.finish(failedAttempt(kind, retryable, call.AttemptCutText(a.ctx, nil), AttemptAbandonedKey.Bool(true)), kind)
}

// endedBy tells how the attempt's context ended, if it did: tool-timeout
// (retryable) when its attempt timeout or the call's deadline passed,
// canceled when the caller canceled it or its own deadline passed (see
// call.HowEnded).
func endedBy(ctx context.Context) (kind middleware.Kind, retryable, ok bool) {
	switch call.HowEnded(ctx) {
	case call.NotEnded:
		return "", false, false
	case call.ByCaller:
		return middleware.KindCanceled, false, true
	default:
		return middleware.KindTimeout, true, true
	}
}

// failedAttempt is the attributes of a failed attempt, error.type first.
func failedAttempt(kind middleware.Kind, retryable bool, reason string, more ...attribute.KeyValue) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.ErrorTypeKey.String(string(kind)),
		KindKey.String(string(kind)),
		RetryableKey.Bool(retryable),
	}
	if reason != "" {
		attrs = append(attrs, ReasonKey.String(reason))
	}
	return append(attrs, more...)
}
