package adktools_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func TestAPoliciesFileWrapsADKTools(t *testing.T) {
	up := toolsafetest.NewUpstream(billing.Handler())
	defer up.Close()
	up.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
	f, err := policyfile.Parse([]byte("version: 1\ntools:\n  fetch_invoice: {retries: 2, backoff: {base: 1ms, max: 1ms}, timeout: 2s, tracing: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := adktools.WrapAll(f, fetchInvoice(t, up.URL()))
	if err != nil {
		t.Fatal(err)
	}
	m := script(calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001"})), say("Paid."))
	ctx, trace := traced(t)

	newLoop(t, m, ts...).run(t, ctx, "s1", ask("Is INV-1001 paid?"))

	if n := up.Requests(billing.InvoicePath("INV-1001")); n != 2 {
		t.Errorf("the upstream got %d requests; want 2: the file's retry", n)
	}
	if got := m.response(t, "call-1"); got["status"] != "paid" {
		t.Errorf("the model got %v; want the invoice", got)
	}
	n := 0
	for _, s := range trace() {
		if s.Name() == "execute_tool fetch_invoice" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d call spans; want ADK's one, which toolsafe adds to", n)
	}
	if _, err := adktools.WrapAll(f, fetchInvoice(t, up.URL()), nil); err == nil {
		t.Error("WrapAll took a nil tool")
	}
}
