package otelhook

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

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
// configuration never changes after New. The zero Hook is ready to use and
// is the same as New() with no options.
type Hook struct {
	cfg    config
	meters meters
}

// New returns a Hook configured by opts. With no options it uses the global
// tracer and meter providers, looked up at each call, and records neither
// the tools' arguments nor their results.
func New(opts ...Option) *Hook {
	h := &Hook{}
	for _, o := range opts {
		if o != nil {
			o.apply(&h.cfg)
		}
	}
	return h
}

func (h *Hook) tracer() trace.Tracer {
	tp := h.cfg.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
}

func (h *Hook) instruments() *instruments {
	mp := h.cfg.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return h.meters.get(mp)
}

// CallSpan returns the middleware of the call span, layer 1 of DESIGN.md §2:
// one span "execute_tool {tool}" around the whole logical call, its retry,
// fallback and breaker events, and the call metrics. It reads the outcome
// from the call record in the context (middleware.CallFrom), which it starts
// when the context carries none for this tool. toolsafe.WithTracing places
// it; use it directly only to build a stack by hand.
func (h *Hook) CallSpan() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			return h.call(ctx, next, input)
		})
	}
}

func (h *Hook) call(ctx context.Context, next tools.Tool, input string) (string, error) {
	name := next.Name()
	call := middleware.CallFrom(ctx)
	if call == nil || call.Tool() != name {
		// Called without toolsafe's root, or as another tool's alternative
		// on that tool's context: this call needs a record of its own.
		call = middleware.NewCall(name, "")
		ctx = middleware.WithCall(ctx, call)
	}
	inst := h.instruments()
	toolAttr := semconv.GenAIToolName(name)

	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		toolAttr,
		semconv.GenAIToolType("function"),
	}
	if d := next.Description(); d != "" {
		attrs = append(attrs, semconv.GenAIToolDescription(d))
	}
	if call.IDKnown() {
		attrs = append(attrs, semconv.GenAIToolCallID(call.ID()))
	}
	if h.cfg.args {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(input))
	}
	start := time.Now()
	ctx, span := h.tracer().Start(ctx, "execute_tool "+name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start),
		trace.WithAttributes(attrs...))
	defer span.End()

	toolSet := metric.WithAttributeSet(attribute.NewSet(toolAttr))
	call.Observe(middleware.Observer{
		Retry: func(attempt int, delay time.Duration, err error) {
			kind, _ := middleware.Classify(err)
			span.AddEvent(EventRetry, trace.WithAttributes(
				AttemptKey.Int(attempt),
				DelayKey.Float64(delay.Seconds()),
				semconv.ErrorTypeKey.String(string(kind))))
		},
		Abandoned: func(int) {
			inst.abandoned.Add(ctx, 1, toolSet)
		},
		AbandonedDone: func(int) {
			inst.abandoned.Add(context.WithoutCancel(ctx), -1, toolSet)
		},
		Fallback: func(alt string) {
			span.AddEvent(EventFallback, trace.WithAttributes(FallbackKey.String(alt)))
		},
		BreakerStateChange: func(breaker, from, to string) {
			kv := []attribute.KeyValue{BreakerKey.String(breaker), BreakerFromKey.String(from), BreakerToKey.String(to)}
			span.AddEvent(EventBreakerStateChange, trace.WithAttributes(kv...))
			inst.breaker.Add(ctx, 1, metric.WithAttributes(append(kv, toolAttr)...))
		},
	})

	out, err := next.Call(ctx, input)

	f := call.Failure()
	if f == nil && err != nil {
		f = middleware.ToFailure(ctx, call, err)
	}
	attempts := call.Attempts()
	end := []attribute.KeyValue{
		AttemptsKey.Int(attempts),
		AbandonedKey.Int(call.Abandoned()),
	}
	alt := call.Fallback()
	if alt != "" {
		end = append(end, FallbackKey.String(alt))
	}
	outcome := "ok"
	switch {
	case f == nil:
		end = append(end, SummaryKey.String(okSummary(name, attempts, alt)))
		if h.cfg.results {
			end = append(end, semconv.GenAIToolCallResultKey.String(out))
		}
	case f.Kind == middleware.KindApprovalRequired:
		outcome = string(f.Kind)
		end = append(end, SummaryKey.String(f.Error()))
		span.AddEvent(EventApprovalRequired)
	case f.Kind == middleware.KindCanceled:
		outcome = string(f.Kind)
		end = append(end, SummaryKey.String(f.Error()))
		span.AddEvent(EventCanceled, trace.WithAttributes(CancelCauseKey.String(cancelCause(ctx, f))))
	default:
		outcome = string(f.Kind)
		msg := f.Error()
		end = append(end,
			SummaryKey.String(msg),
			semconv.ErrorTypeKey.String(string(f.Kind)),
			RetryableKey.Bool(f.Retryable))
		if f.SideEffect == middleware.SideEffectUnknown {
			end = append(end, SideEffectKey.String(f.SideEffect.String()))
		}
		span.SetStatus(codes.Error, msg)
	}
	span.SetAttributes(end...)

	mctx := context.WithoutCancel(ctx)
	outcomeSet := metric.WithAttributeSet(attribute.NewSet(toolAttr, OutcomeKey.String(outcome)))
	inst.calls.Add(mctx, 1, outcomeSet)
	if attempts > 0 {
		inst.attempts.Add(mctx, int64(attempts), toolSet)
	}
	inst.duration.Record(mctx, time.Since(start).Seconds(), outcomeSet)
	return out, err
}

// okSummary is the summary of a successful call: toolsafe's own words,
// never the tool's output.
func okSummary(tool string, attempts int, alt string) string {
	s := "ok after " + plural(attempts, "attempt")
	if alt != "" {
		s = "ok: answered by the fallback tool " + alt + " after " + plural(attempts, "attempt") + " on " + tool
	}
	return s
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

// AttemptSpan returns the middleware of the attempt span, layer 10 of
// DESIGN.md §2: one child span "attempt {n}" per attempt, started on the
// attempt's goroutine inside the attempt timeout (which numbers the
// attempts, see middleware.AttemptNumber). toolsafe.WithTracing places it;
// use it directly only to build a stack by hand.
func (h *Hook) AttemptSpan() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			return h.attempt(ctx, next, input)
		})
	}
}

func (h *Hook) attempt(ctx context.Context, next tools.Tool, input string) (string, error) {
	n := middleware.AttemptNumber(ctx)
	if n == 0 {
		n = 1 // no attempt timeout layer: a single attempt
	}
	ctx, span := h.tracer().Start(ctx, "attempt "+strconv.Itoa(n),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttemptKey.Int(n)))

	// The span ends once: when the tool returns, or when the attempt
	// timeout gives up on it, whichever comes first.
	var once sync.Once
	finish := func(attrs []attribute.KeyValue, kind middleware.Kind) {
		once.Do(func() {
			span.SetAttributes(attrs...)
			if kind != "" {
				span.SetStatus(codes.Error, string(kind))
			}
			span.End()
		})
	}
	if call := middleware.CallFrom(ctx); call != nil {
		call.Observe(middleware.Observer{Abandoned: func(attempt int) {
			if attempt == n {
				kind, retryable := middleware.KindTimeout, true
				if k, r, ok := endedBy(ctx); ok {
					kind, retryable = k, r
				}
				finish(failedAttempt(kind, retryable, "", AttemptAbandonedKey.Bool(true)), kind)
			}
		}})
	}

	out, err := next.Call(ctx, input)
	if err == nil {
		finish(nil, "")
		return out, nil
	}
	kind, retryable := middleware.Classify(err)
	switch {
	case kind == middleware.KindApprovalRequired:
		// A pause is not an error (DESIGN.md §7).
		span.AddEvent(EventApprovalRequired)
		finish(nil, "")
		return out, err
	default:
		if k, r, ok := endedBy(ctx); ok {
			kind, retryable = k, r
		}
	}
	finish(failedAttempt(kind, retryable, middleware.Reason(err)), kind)
	return out, err
}

// endedBy tells how the attempt's context ended, if it did: tool-timeout
// (retryable) when its time, or the call's, was up, canceled when the caller
// canceled it.
func endedBy(ctx context.Context) (kind middleware.Kind, retryable, ok bool) {
	switch err := ctx.Err(); {
	case err == nil:
		return "", false, false
	case errors.Is(err, context.DeadlineExceeded):
		return middleware.KindTimeout, true, true
	default:
		return middleware.KindCanceled, false, true
	}
}

func failedAttempt(kind middleware.Kind, retryable bool, reason string, more ...attribute.KeyValue) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.ErrorTypeKey.String(string(kind)),
		RetryableKey.Bool(retryable),
	}
	if reason != "" {
		attrs = append(attrs, ReasonKey.String(reason))
	}
	return append(attrs, more...)
}
