package adktools_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/tool"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// noWait retries at once, so that no test waits for a backoff.
var noWait = policy.Backoff{Base: time.Millisecond, Max: time.Millisecond, Multiplier: 1, Rand: func() float64 { return 0 }}

// results keeps the Results of the calls, in order.
type results struct {
	mu  sync.Mutex
	all []middleware.Result
}

func (rs *results) option() toolsafe.Option {
	return toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		rs.mu.Lock()
		rs.all = append(rs.all, r)
		rs.mu.Unlock()
	})
}

func (rs *results) get(t *testing.T, n int) []middleware.Result {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.all) != n {
		t.Fatalf("%d calls; want %d", len(rs.all), n)
	}
	return append([]middleware.Result(nil), rs.all...)
}

func TestUnderADKsAgentLoop(t *testing.T) {
	t.Run("a transient fault is retried and the model gets the invoice", func(t *testing.T) {
		up := toolsafetest.NewUpstream(billing.Handler())
		defer up.Close()
		up.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Unavailable(""))
		var rs results
		invoice := adktools.Wrap(fetchInvoice(t, up.URL()), rs.option(),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: noWait}))
		m := script(calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001"})), say("INV-1001 is paid."))

		evs := newLoop(t, m, invoice).run(t, context.Background(), "s1", ask("Is INV-1001 paid?"))

		if n := up.Requests(billing.InvoicePath("INV-1001")); n != 3 {
			t.Errorf("the upstream got %d requests; want 3 (two faults, then the answer)", n)
		}
		if got := m.response(t, "call-1"); got["status"] != "paid" || got["number"] != "INV-1001" {
			t.Errorf("the model got %v; want the invoice", got)
		}
		if r := rs.get(t, 1)[0]; r.Attempts != 3 || r.CallID != "call-1" {
			t.Errorf("%d attempts, call ID %q; want 3 and the model's call-1", r.Attempts, r.CallID)
		}
		if finalText(evs) != "INV-1001 is paid." {
			t.Errorf("the run ended with %q", finalText(evs))
		}
	})

	t.Run("a tool error reaches the model in toolsafe's words and the run goes on", func(t *testing.T) {
		up := toolsafetest.NewUpstream(billing.Handler())
		defer up.Close()
		up.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())
		invoice := adktools.Wrap(fetchInvoice(t, up.URL()), toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: noWait}))
		m := script(
			calls(call("call-1", "fetch_invoice", map[string]any{"number": "7"})),
			calls(call("call-2", "fetch_invoice", map[string]any{"number": "INV-1002"})),
			say("I could not read the invoice."))

		evs := newLoop(t, m, invoice).run(t, context.Background(), "s1", ask("Show invoice 7, then INV-1002."))

		msg, _ := m.response(t, "call-1")["error"].(string)
		if !strings.Contains(msg, `"7" is not an invoice number`) {
			t.Errorf("the model got %q; want the tool's own message", msg)
		}
		msg, _ = m.response(t, "call-2")["error"].(string)
		if !strings.Contains(msg, "fetch_invoice") || !strings.Contains(msg, "2 attempts") || strings.Contains(msg, "reset by peer") {
			t.Errorf("the model got %q; want toolsafe's message naming the tool and its 2 attempts, not the network's text", msg)
		}
		if up.Requests(billing.InvoicePath("INV-1002")) != 2 {
			t.Errorf("the upstream got %d requests; want 2", up.Requests(billing.InvoicePath("INV-1002")))
		}
		if finalText(evs) != "I could not read the invoice." || m.left() != 0 {
			t.Errorf("the run ended with %q, %d turns left; want it to go on to the model's answer", finalText(evs), m.left())
		}
	})

	t.Run("a hung tool returns when its attempt timeout passes", func(t *testing.T) {
		up := toolsafetest.NewUpstream(billing.Handler())
		defer up.Close()
		up.Always(billing.InvoicePath("INV-1001"), toolsafetest.Hang())
		var rs results
		invoice := adktools.Wrap(fetchInvoice(t, up.URL()), rs.option(), toolsafe.WithTimeout(20*time.Millisecond))
		m := script(calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001"})), say("The billing system does not answer."))

		newLoop(t, m, invoice).run(t, context.Background(), "s1", ask("Is INV-1001 paid?"))

		r := rs.get(t, 1)[0]
		if r.Kind() != middleware.KindTimeout {
			t.Fatalf("the call ended %q; want tool-timeout", r.Kind())
		}
		if msg, _ := m.response(t, "call-1")["error"].(string); msg != r.Observation() {
			t.Errorf("the model got %q; want toolsafe's message %q", msg, r.Observation())
		}
	})

	t.Run("keys that differ only in case are refused before any attempt", func(t *testing.T) {
		up := toolsafetest.NewUpstream(billing.Handler())
		defer up.Close()
		var rs results
		invoice := adktools.Wrap(fetchInvoice(t, up.URL()), rs.option())
		m := script(calls(call("call-1", "fetch_invoice", map[string]any{"number": "INV-1001", "Number": "INV-1002"})), say("Which invoice?"))

		newLoop(t, m, invoice).run(t, context.Background(), "s1", ask("Is INV-1001 paid?"))

		if r := rs.get(t, 1)[0]; r.Kind() != middleware.KindArgsInvalid || r.Attempts != 0 || up.Requests("") != 0 {
			t.Errorf("the call ended %q after %d attempts, %d requests; want args-invalid, nothing sent", r.Kind(), r.Attempts, up.Requests(""))
		}
	})

	t.Run("the loop guard refuses a repeat of a call that failed for good", func(t *testing.T) {
		up := toolsafetest.NewUpstream(billing.Handler())
		defer up.Close()
		up.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())
		var rs results
		invoice := adktools.Wrap(fetchInvoice(t, up.URL()), rs.option(),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: noWait}), toolsafe.WithCallLimits(run.Limits{Identical: 5}))
		args := map[string]any{"number": "INV-1002"}
		m := script(calls(call("call-1", "fetch_invoice", args)), calls(call("call-2", "fetch_invoice", args)), say("Billing is down."))

		newLoop(t, m, invoice).run(t, run.With(context.Background(), "session-s1", run.NewMemoryLedger()), "s1", ask("Is INV-1002 paid?"))

		got := rs.get(t, 2)
		if got[1].Kind() != middleware.KindCallLimit || got[1].Attempts != 0 {
			t.Errorf("the repeat ended %s after %d attempts; want call-limit, not attempted", got[1].Kind(), got[1].Attempts)
		}
		if n := up.Requests(billing.InvoicePath("INV-1002")); n != 2 {
			t.Errorf("the upstream got %d requests; want the first call's 2 only", n)
		}
		if msg, _ := m.response(t, "call-2")["error"].(string); msg == "" {
			t.Errorf("the model got no refusal for the repeat")
		}
	})
}

var _ tool.Tool = (*adktools.Tool)(nil)
