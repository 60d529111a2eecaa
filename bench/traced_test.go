package bench

import (
	"context"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
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
	wrap := func(hook *otelhook.Hook) *toolsafe.Tool {
		return toolsafe.Wrap(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
			toolsafe.WithTimeout(attemptTimeout),
			toolsafe.WithTracing(hook))
	}
	traced := wrap(otelhook.New(otelhook.WithTracerProvider(tp)))
	metered := wrap(otelhook.New(otelhook.WithTracerProvider(tp), otelhook.WithMeterProvider(meterProvider())))
	return map[string]runner{
		"toolsafe-traced": func(ctx context.Context) (string, error) {
			return traced.Call(ctx, "x")
		},
		// toolsafe-metered is toolsafe-traced with the SDK's meter
		// provider too, read by a manual reader no one collects from: the
		// cost of recording the call's metrics, not of exporting them.
		"toolsafe-metered": func(ctx context.Context) (string, error) {
			return metered.Call(ctx, "x")
		},
	}
}

// meterProvider is the OpenTelemetry SDK's meter provider with a manual
// reader, as a program that exports metrics has one.
func meterProvider() *sdkmetric.MeterProvider {
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
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
	// twoSpans makes the two spans once.
	twoSpans := func() {
		cctx, call := tracer.Start(ctx, "execute_tool bench", trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("bench"),
				semconv.GenAIToolType("function"), semconv.GenAIToolDescription("benchmark tool")))
		_, attempt := tracer.Start(cctx, "attempt 1", trace.WithAttributes(otelhook.AttemptKey.Int(1)))
		attempt.End()
		call.SetAttributes(otelhook.AttemptsKey.Int(1), otelhook.SummaryKey.String("ok after 1 attempt"))
		call.End()
	}
	b.Run("two", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			twoSpans()
		}
	})
	// two-metered is the reference for toolsafe-metered: the same two spans,
	// and the four measurements a successful call records (its count, its
	// attempts, toolsafe.tool.duration and gen_ai.execute_tool.duration),
	// made with attribute sets made once, as a program that measured its
	// own calls would.
	meter := meterProvider().Meter(otelhook.ScopeName)
	calls, _ := meter.Int64Counter("calls")
	attempts, _ := meter.Int64Counter("attempts")
	duration, _ := meter.Float64Histogram("duration")
	execute, _ := meter.Float64Histogram("execute")
	byTool := metric.WithAttributeSet(attribute.NewSet(semconv.GenAIToolName("bench")))
	byOutcome := metric.WithAttributeSet(attribute.NewSet(semconv.GenAIToolName("bench"), otelhook.OutcomeKey.String("ok")))
	byType := metric.WithAttributeSet(attribute.NewSet(semconv.GenAIToolName("bench"), semconv.GenAIToolType("function")))
	b.Run("two-metered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			twoSpans()
			took := time.Since(start).Seconds()
			calls.Add(ctx, 1, byOutcome)
			attempts.Add(ctx, 1, byTool)
			duration.Record(ctx, took, byOutcome)
			execute.Record(ctx, took, byType)
		}
	})
}
