package einotools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func retryPolicy(n int) toolsafe.Option {
	return toolsafe.WithRetry(policy.Retry{MaxRetries: n, Backoff: policy.Backoff{Base: time.Millisecond, Max: time.Millisecond}})
}

// A transient fault is retried and the model gets the answer.
func TestATransientFaultIsRetried(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	up.Enqueue("/invoices/INV-1001", toolsafetest.Reset(), toolsafetest.Reset())
	fetch, err := einotools.New(context.Background(), fetchInvoice(t, up.URL(), toolsafetest.NoKeepAliveClient()), retryPolicy(3))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "fetch_invoice", `{"number":"INV-1001"}`)), answer("INV-1001 is paid."))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(context.Background(), "status of INV-1001?"))
	if o.err != nil || o.answer != "INV-1001 is paid." {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	if got := up.Requests("/invoices/INV-1001"); got != 3 {
		t.Errorf("the upstream got %d requests, want 3 (two resets, then the answer)", got)
	}
	if got := llm.observations()["call_1"]; got != `{"number":"INV-1001","status":"paid"}` {
		t.Errorf("the model saw %q, want the invoice", got)
	}
}

// A tool error reaches the model and the run goes on.
func TestAToolErrorReachesTheModel(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	fetch, err := einotools.New(context.Background(), fetchInvoice(t, up.URL(), nil), retryPolicy(3))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(
		calls(toolCall("call_1", "fetch_invoice", `{"number":"1001"}`)),
		calls(toolCall("call_2", "fetch_invoice", `{"number":"INV-1001"}`)),
		answer("INV-1001 is paid."))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(context.Background(), "status of 1001?"))
	if o.err != nil || o.answer != "INV-1001 is paid." {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	seen := llm.observations()
	if !strings.Contains(seen["call_1"], `"1001" is not an invoice number`) {
		t.Errorf("the model saw %q for the bad number, want the tool's message", seen["call_1"])
	}
	if up.Requests("") != 1 {
		t.Errorf("the upstream got %d requests, want 1: a tool error is not retried", up.Requests(""))
	}
}

// A failure that outlives its retries tells the model without the upstream's text.
func TestAFailureKeepsTheUpstreamsTextOut(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	up.Always("/invoices/INV-1001", toolsafetest.Respond(500, "ledger shard 7 exploded"))
	fetch, err := einotools.New(context.Background(), fetchInvoice(t, up.URL(), nil), retryPolicy(2))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "fetch_invoice", `{"number":"INV-1001"}`)), answer("billing is down"))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(context.Background(), "status?"))
	if o.err != nil {
		t.Fatalf("the run ended with %v", o.err)
	}
	seen := llm.observations()["call_1"]
	if !strings.Contains(seen, "fetch_invoice") || !strings.Contains(seen, "3 attempts") || strings.Contains(seen, "shard 7") {
		t.Errorf("the model saw %q: want the tool and its 3 attempts, never the upstream's body", seen)
	}
}

// The loop guard stops a model that repeats a call that failed for good.
func TestTheLoopGuardStopsARepeat(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	up.Always("/invoices/INV-1001", toolsafetest.Respond(503, ""))
	fetch, err := einotools.New(context.Background(), fetchInvoice(t, up.URL(), nil), retryPolicy(1),
		toolsafe.WithCallLimits(run.Limits{Identical: 5}))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(
		calls(toolCall("call_1", "fetch_invoice", `{"number":"INV-1001"}`)),
		calls(toolCall("call_2", "fetch_invoice", `{"number":"INV-1001"}`)),
		answer("billing is down"))
	ctx := run.With(context.Background(), "", nil)
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(ctx, "status?"))
	if o.err != nil || o.answer != "billing is down" {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	if got := up.Requests(""); got != 2 {
		t.Errorf("the upstream got %d requests, want 2: the repeat is refused before any attempt", got)
	}
	if seen := llm.observations()["call_2"]; seen == "" || seen == llm.observations()["call_1"] {
		t.Errorf("the model saw %q for the repeat, want the loop guard's refusal", seen)
	}
}

// A hung tool returns on time and the run goes on.
func TestAHungToolReturnsOnTime(t *testing.T) {
	hung := &ignoresContext{release: make(chan struct{})}
	defer close(hung.release)
	fetch, err := einotools.New(context.Background(), hung, toolsafe.WithTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "slow_lookup", `{}`)), answer("the lookup is stuck"))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(context.Background(), "look it up"))
	if o.err != nil || o.answer != "the lookup is stuck" {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	if seen := llm.observations()["call_1"]; !strings.Contains(seen, "slow_lookup") || !strings.Contains(seen, "did not answer") {
		t.Errorf("the model saw %q, want a timeout of slow_lookup", seen)
	}
}

// ignoresContext is an Eino tool that ignores its context and returns only
// when release is closed.
type ignoresContext struct{ release chan struct{} }

func (h *ignoresContext) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "slow_lookup", Desc: "looks something up, slowly"}, nil
}

func (h *ignoresContext) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	<-h.release
	return "too late", nil
}
