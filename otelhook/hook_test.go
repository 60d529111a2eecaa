package otelhook_test

import (
	"context"
	"testing"

	"github.com/toolsafe/toolsafe/internal/layer"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The global providers are looked up when a call happens, not when the
// Hook is made: a program may set them after building its tools.
func TestGlobalProvidersAreResolvedAtEachCall(t *testing.T) {
	prevTP, prevMP := otel.GetTracerProvider(), otel.GetMeterProvider()
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetMeterProvider(prevMP)
	})
	hook := otelhook.New()
	tool := middleware.Chain(hook.CallSpan(), layer.Surface(), layer.AttemptTimeout(0), hook.AttemptSpan())(
		middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil }))

	for i := range 2 {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)

		if out, err := tool.Call(context.Background(), "hi"); out != "hi" || err != nil {
			t.Fatalf("call %d: %q, %v", i, out, err)
		}
		if n := len(spans.Ended()); n != 2 {
			t.Errorf("provider %d recorded %d spans; want 2 (call and attempt)", i, n)
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		if len(rm.ScopeMetrics) != 1 || rm.ScopeMetrics[0].Scope.Name != otelhook.ScopeName {
			t.Errorf("provider %d got metrics %+v; want the hook's", i, rm.ScopeMetrics)
		}
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
}

// A stack built by hand, without toolsafe's root, still gets a call record
// and so a complete call span.
func TestCallSpanWithoutTheRoot(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	hook := otelhook.New(otelhook.WithTracerProvider(tp))
	tool := middleware.Chain(hook.CallSpan(), layer.Surface())(
		middleware.Func("lookup", "looks up", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("no such record")
		}))
	out, err := tool.Call(context.Background(), "x")
	if err != nil || out != "no such record" {
		t.Fatalf("%q, %v; want the tool-error as the observation", out, err)
	}
	ended := spans.Ended()
	if len(ended) != 1 || ended[0].Name() != "execute_tool lookup" {
		t.Fatalf("spans %v; want one call span", ended)
	}
	var kind string
	for _, kv := range ended[0].Attributes() {
		if kv.Key == "error.type" {
			kind = kv.Value.AsString()
		}
	}
	if kind != "tool-error" {
		t.Errorf("error.type %q; want tool-error", kind)
	}
}

// uncomparableProvider is a tracer provider whose type cannot be compared
// with ==: a program may hand the Hook one.
type uncomparableProvider struct {
	trace.TracerProvider
	_ []int
}

// A provider of a type that cannot be compared is used, call after call,
// without a panic: the Hook cannot tell it is the same provider, and asks it
// for its tracer again.
func TestAProviderThatCannotBeComparedIsUsed(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	hook := otelhook.New(otelhook.WithTracerProvider(uncomparableProvider{TracerProvider: tp}))
	tool := middleware.Chain(hook.CallSpan(), layer.Surface(), layer.AttemptTimeout(0), hook.AttemptSpan())(
		middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil }))
	for i := range 3 {
		if out, err := tool.Call(context.Background(), "hi"); out != "hi" || err != nil {
			t.Fatalf("call %d: %q, %v", i, out, err)
		}
	}
	if n := len(spans.Ended()); n != 6 {
		t.Errorf("%d spans; want 6 (a call and an attempt span for each of 3 calls)", n)
	}
}
