package einotools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestSpansCarryEinosCallID(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	up.Enqueue("/invoices/INV-1001", toolsafetest.Reset())
	up.Always("/invoices/INV-2001", toolsafetest.Respond(500, "ledger shard 7 exploded"))

	f, err := policyfile.Parse([]byte("version: 1\ntools:\n  fetch_invoice:\n    retries: 1\n    backoff: {base: 1ms, max: 1ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := []tool.BaseTool{fetchInvoice(t, up.URL(), toolsafetest.NoKeepAliveClient())}
	mw, err := einotools.Middleware(context.Background(),
		f.With(toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp)))), ts)
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(
		toolCall("call_paid", "fetch_invoice", `{"number":"INV-1001"}`),
		toolCall("call_down", "fetch_invoice", `{"number":"INV-2001"}`)),
		answer("one is paid, one could not be read"))
	o := drive(runner(t, llm, newStore(), ts, mw).Query(context.Background(), "status?"))
	if o.err != nil {
		t.Fatalf("the run ended with %v", o.err)
	}

	ids := map[string]bool{}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == "gen_ai.tool.call.id" {
				ids[kv.Value.AsString()] = true
			}
			if strings.Contains(kv.Value.String(), "shard 7") {
				t.Errorf("span %q attribute %s carries the upstream's text", s.Name(), kv.Key)
			}
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				if strings.Contains(kv.Value.String(), "shard 7") {
					t.Errorf("span %q event %s carries the upstream's text", s.Name(), ev.Name)
				}
			}
		}
		if strings.Contains(s.Status().Description, "shard 7") {
			t.Errorf("span %q status carries the upstream's text", s.Name())
		}
	}
	if !ids["call_paid"] || !ids["call_down"] || len(ids) != 2 {
		t.Errorf("the spans carry call IDs %v, want Eino's call_paid and call_down", ids)
	}
	var tree strings.Builder
	if err := toolsafetest.WriteSpanTree(&tree, rec.Ended(), toolsafetest.WithoutDurations()); err != nil {
		t.Fatal(err)
	}
	if strings.Count(tree.String(), "execute_tool fetch_invoice") != 2 || !strings.Contains(tree.String(), "attempt 2") {
		t.Errorf("the span tree is\n%s\nwant two calls, one retried", tree.String())
	}
}
