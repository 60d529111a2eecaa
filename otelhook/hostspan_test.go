package otelhook_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// hostTracing is a recorder, its provider, and a Hook in host mode on it.
func hostTracing(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider, *otelhook.Hook) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return spans, tp, otelhook.New(otelhook.WithTracerProvider(tp), otelhook.WithHostCallSpan())
}

func attrOf(kvs []attribute.KeyValue, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestHostCallSpan(t *testing.T) {
	t.Run("the host's span gets the call's attributes and events, and only attempt spans start", func(t *testing.T) {
		spans, tp, hook := hostTracing(t)
		n := 0
		flaky := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
			if n++; n == 1 {
				return "", middleware.Transient(errors.New("busy"))
			}
			return `{"status":"paid"}`, nil
		})
		tool := toolsafe.Wrap(flaky, toolsafe.WithTracing(hook),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Backoff{Base: 1, Rand: func() float64 { return 0 }}}))

		ctx, host := tp.Tracer("host").Start(context.Background(), "execute_tool fetch_invoice")
		r := tool.Run(ctx, `{"number":"INV-1001"}`)
		if ended := spans.Ended(); len(ended) != 2 {
			t.Fatalf("%d spans ended before the host ended its own; want the 2 attempt spans", len(ended))
		}
		host.End()
		if r.Status() != "ok" || r.Attempts != 2 {
			t.Fatalf("status %q after %d attempts; want ok after 2", r.Status(), r.Attempts)
		}
		ended := spans.Ended()
		if len(ended) != 3 {
			t.Fatalf("%d spans; want the host's and 2 attempt spans", len(ended))
		}
		call := ended[2]
		if call.Name() != "execute_tool fetch_invoice" || call.InstrumentationScope().Name != "host" {
			t.Fatalf("last span %q of %q; want the host's call span", call.Name(), call.InstrumentationScope().Name)
		}
		for _, a := range ended[:2] {
			if a.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Errorf("%s is not a child of the host's span", a.Name())
			}
		}
		if v, _ := attrOf(call.Attributes(), otelhook.AttemptsKey); v.AsInt64() != 2 {
			t.Errorf("toolsafe.attempts %v on the host's span; want 2", v.AsInt64())
		}
		if v, _ := attrOf(call.Attributes(), otelhook.CallIDKey); v.AsString() != r.CallID {
			t.Errorf("toolsafe.call.id %q; want %q", v.AsString(), r.CallID)
		}
		if ev := call.Events(); len(ev) != 1 || ev[0].Name != "retry" {
			t.Errorf("events %v on the host's span; want one retry", ev)
		}
	})

	t.Run("without a recording span in the context the hook starts its own", func(t *testing.T) {
		spans, _, hook := hostTracing(t)
		tool := toolsafe.Wrap(middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil }),
			toolsafe.WithTracing(hook))
		tool.Run(context.Background(), `{}`)
		if ended := spans.Ended(); len(ended) != 2 || ended[1].Name() != "execute_tool echo" {
			t.Fatalf("spans %v; want an attempt span and the hook's own call span", ended)
		}
	})

	t.Run("an alternative tool gets its own call span under the host's", func(t *testing.T) {
		spans, tp, hook := hostTracing(t)
		down := middleware.Func("search", "searches", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("the index is down")
		})
		archive := toolsafe.Wrap(middleware.Func("search_archive", "searches the archive", func(context.Context, string) (string, error) {
			return `{"hits":1}`, nil
		}), toolsafe.WithTracing(hook))
		tool := toolsafe.Wrap(down, toolsafe.WithTracing(hook),
			toolsafe.WithFallback(fallback.To(archive, fallback.On(middleware.KindToolError))))
		ctx, host := tp.Tracer("host").Start(context.Background(), "execute_tool search")
		r := tool.Run(ctx, `{"q":"x"}`)
		host.End()
		if r.Fallback != "search_archive" {
			t.Fatalf("fallback %q (%v); want search_archive", r.Fallback, r.Failure)
		}
		var alt, hostSpan sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			switch s.Name() {
			case "execute_tool search_archive":
				alt = s
			case "execute_tool search":
				hostSpan = s
			}
		}
		if alt == nil || hostSpan == nil || alt.Parent().SpanID() != hostSpan.SpanContext().SpanID() {
			t.Fatalf("alternative's span %v, host's %v; want the alternative's own span under the host's", alt, hostSpan)
		}
		if v, _ := attrOf(hostSpan.Attributes(), otelhook.FallbackKey); v.AsString() != "search_archive" {
			t.Errorf("toolsafe.fallback %q on the host's span; want search_archive", v.AsString())
		}
		if v, _ := attrOf(hostSpan.Attributes(), "gen_ai.tool.name"); v.AsString() != "search" {
			t.Errorf("gen_ai.tool.name %q on the host's span; want search (the alternative must not write over it)", v.AsString())
		}
	})
}
