package otelhook_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
)

// The call span names its call on every route: toolsafe.call.id always (the
// call_id of its log lines), gen_ai.tool.call.id only when the model named
// the call, whether the call succeeded (the span's fast path), failed, or
// had its content recorded, and when a panic goes through a stack built by
// hand.
func TestTheCallSpanNamesItsCallOnEveryRoute(t *testing.T) {
	ok := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return `{"status":"paid"}`, nil
	})
	failing := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("no invoice has that number")
	})
	modelID := toolsafe.CallIDFunc(func(context.Context) string { return "call_from_model_7" })
	for _, tc := range []struct {
		name    string
		tool    tools.Tool
		opts    []toolsafe.Option
		content bool
		wantID  string // the model's ID, or "" for one toolsafe made up
	}{
		{"success", ok, nil, false, ""},
		{"success with the model's ID", ok, []toolsafe.Option{toolsafe.WithCallIDs(modelID)}, false, "call_from_model_7"},
		{"failure with the model's ID", failing, []toolsafe.Option{toolsafe.WithCallIDs(modelID)}, false, "call_from_model_7"},
		{"success with content recorded", ok, []toolsafe.Option{toolsafe.WithCallIDs(modelID)}, true, "call_from_model_7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			opts := []otelhook.Option{otelhook.WithTracerProvider(tp)}
			if tc.content {
				opts = append(opts, otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true))
			}
			tool := toolsafe.Wrap(tc.tool, append(tc.opts, toolsafe.WithTracing(otelhook.New(opts...)))...)
			r := tool.Run(context.Background(), `{"number":"INV-1001"}`)
			call := callSpanOf(t, spans)
			id, _ := attrOf(call.Attributes(), otelhook.CallIDKey)
			if id.AsString() == "" || id.AsString() != r.CallID {
				t.Errorf("toolsafe.call.id %q; want the result's call ID %q", id.AsString(), r.CallID)
			}
			model, named := attrOf(call.Attributes(), semconv.GenAIToolCallIDKey)
			switch {
			case tc.wantID == "" && named:
				t.Errorf("gen_ai.tool.call.id %q on a call the model did not name", model.AsString())
			case tc.wantID != "" && model.AsString() != tc.wantID:
				t.Errorf("gen_ai.tool.call.id %q; want the model's %q", model.AsString(), tc.wantID)
			}
			if _, ok := attrOf(call.Attributes(), semconv.GenAIToolCallArgumentsKey); ok != tc.content {
				t.Errorf("arguments recorded: %v; want %v", ok, tc.content)
			}
		})
	}

	t.Run("a panic through a stack built by hand", func(t *testing.T) {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		hook := otelhook.New(otelhook.WithTracerProvider(tp))
		boom := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
			panic("boom")
		})
		tool := hook.CallSpan()(boom)
		func() {
			defer func() { _ = recover() }()
			_, _ = tool.Call(context.Background(), `{"number":"INV-1001"}`)
			t.Fatal("the panic did not go through")
		}()
		call := callSpanOf(t, spans)
		if id, _ := attrOf(call.Attributes(), otelhook.CallIDKey); id.AsString() == "" {
			t.Errorf("the span a panic went through has no toolsafe.call.id: %v", call.Attributes())
		}
	})
}

// callSpanOf is the one call span spans recorded.
func callSpanOf(t *testing.T, spans *tracetest.SpanRecorder) sdktrace.ReadOnlySpan {
	t.Helper()
	var calls []sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == "execute_tool fetch_invoice" {
			calls = append(calls, s)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%d call spans; want 1", len(calls))
	}
	return calls[0]
}
