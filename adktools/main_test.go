package adktools_test

import (
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

// spans records every span of the test binary. ADK makes its tracer from
// the global provider once, when its package starts, and a global provider
// delegates to the first one set only: it is set here, once, and each test
// reads the spans of its own trace (see traceOf).
var spans = tracetest.NewSpanRecorder()

func TestMain(m *testing.M) {
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	goleak.VerifyTestMain(m)
}
