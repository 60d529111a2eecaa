package bench

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// tracedContenders is toolsafe with the OpenTelemetry SDK, every span
// sampled, spans handed to a no-op exporter.
func tracedContenders(t tools.Tool) map[string]runner {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSyncer(tracetest.NewNoopExporter()), // the cost of making spans, not of shipping them
	)
	wrapped := toolsafe.Wrap(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
		toolsafe.WithTimeout(attemptTimeout),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))))
	return map[string]runner{
		"toolsafe-traced": func(ctx context.Context) (string, error) {
			return wrapped.Call(ctx, "x")
		},
	}
}

// BenchmarkSpans is the reference for what tracing may cost: two bare spans
// (a call span with a child), with the same SDK setup as toolsafe-traced and
// the attributes of otelhook's call span. Tracing should add to toolsafe's
// success path no more than this.
func BenchmarkSpans(b *testing.B) {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSyncer(tracetest.NewNoopExporter()),
	)
	tracer := tp.Tracer(otelhook.ScopeName)
	ctx := context.Background()
	b.Run("two", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cctx, call := tracer.Start(ctx, "execute_tool bench", trace.WithSpanKind(trace.SpanKindInternal),
				trace.WithAttributes(
					semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bench"),
					semconv.GenAIToolType("function"), semconv.GenAIToolDescription("benchmark tool")))
			_, attempt := tracer.Start(cctx, "attempt 1", trace.WithAttributes(otelhook.AttemptKey.Int(1)))
			attempt.End()
			call.SetAttributes(otelhook.AttemptsKey.Int(1), otelhook.SummaryKey.String("ok after 1 attempt"))
			call.End()
		}
	})
}
