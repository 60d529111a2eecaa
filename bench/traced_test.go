package bench

import (
	"context"

	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

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
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries}),
		toolsafe.WithTimeout(attemptTimeout),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))))
	return map[string]runner{
		"toolsafe-traced": func(ctx context.Context) (string, error) {
			return wrapped.Call(ctx, "x")
		},
	}
}
