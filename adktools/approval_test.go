package adktools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// small approves refunds under 100 EUR by itself; larger ones wait for the
// user, whom ADK asks.
var small = approval.ApproverFunc(func(_ context.Context, c approval.CallInfo) (approval.Decision, error) {
	if strings.Contains(c.Input, `"amount_eur":25`) {
		return approval.Approved, nil
	}
	return approval.Pending, nil
})

func TestApprovalThroughADKsConfirmation(t *testing.T) {
	big := map[string]any{"order": "A-1001", "amount_eur": 900}
	little := map[string]any{"order": "A-1002", "amount_eur": 25}
	setup := func(t *testing.T) (*refunds.Ledger, *toolsafetest.Upstream, *results, *adktools.Tool) {
		ledger := refunds.NewLedger()
		up := toolsafetest.NewUpstream(ledger.Handler())
		t.Cleanup(up.Close)
		var rs results
		w := adktools.Wrap(refund(t, up.URL()), rs.option(),
			toolsafe.WithApproval(adktools.Confirmations(small)),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: noWait}))
		return ledger, up, &rs, w
	}

	t.Run("a pause, the user's confirmation and the resume apply the refund once; a completed sibling is replayed", func(t *testing.T) {
		ledger, up, rs, w := setup(t)
		m := script(
			calls(call("call-1", "refund", big), call("call-2", "refund", little)),
			// After the resume the model asks for the small refund again.
			calls(call("call-3", "refund", little)),
			say("Both orders are refunded."))
		l := newLoop(t, m, w)
		ledgerOfRuns := run.NewMemoryLedger()

		evs := l.run(t, run.With(context.Background(), "s1", ledgerOfRuns), "s1", ask("Refund A-1001 900 EUR and A-1002 25 EUR."))
		reqs := adktools.Requests(evs[len(evs)-1])
		if len(reqs) != 1 || reqs[0].Pause.Tool != "refund" || reqs[0].Pause.CallID != "call-1" {
			t.Fatalf("the run ended asking %+v; want the confirmation of call-1", reqs)
		}
		if ledger.Applied() != 1 {
			t.Fatalf("%d refunds applied before the user answered; want the small one only", ledger.Applied())
		}

		evs = l.run(t, run.With(context.Background(), "s1", ledgerOfRuns), "s1", adktools.Answer(reqs[0].ID, true))

		if ledger.Applied() != 2 || up.Requests(refunds.Path) != 2 {
			t.Errorf("%d refunds applied from %d requests; want 2 from 2: each once", ledger.Applied(), up.Requests(refunds.Path))
		}
		if got := m.response(t, "call-1"); got["status"] != "applied" || got["order"] != "A-1001" {
			t.Errorf("the model got %v for the resumed call; want the applied refund", got)
		}
		if got, first := m.response(t, "call-3"), m.response(t, "call-2"); got["refund"] != first["refund"] {
			t.Errorf("the repeat got %v; want the first answer %v again", got, first)
		}
		var got []string // each call's status, in the order each call ended
		for _, r := range rs.get(t, 4) {
			st := r.Status()
			if r.Replayed {
				st = "replayed"
			}
			got = append(got, r.CallID+" "+st)
		}
		// The two calls of the first turn run at once, in either order.
		if strings.Join(got[2:], ", ") != "call-1 ok, call-3 replayed" || !slices.Contains(got[:2], "call-1 paused") || !slices.Contains(got[:2], "call-2 ok") {
			t.Errorf("calls %v; want call-1 paused and call-2 ok, then the resumed call-1 ok and call-3 replayed", got)
		}
		if finalText(evs) != "Both orders are refunded." {
			t.Errorf("the run ended with %q", finalText(evs))
		}
	})

	t.Run("a rejection is a denial for the model, and nothing is sent", func(t *testing.T) {
		ledger, up, _, w := setup(t)
		m := script(calls(call("call-1", "refund", big)), say("The refund was not approved."))
		l := newLoop(t, m, w)
		evs := l.run(t, context.Background(), "s1", ask("Refund A-1001 900 EUR."))
		reqs := adktools.Requests(evs[len(evs)-1])
		if len(reqs) != 1 {
			t.Fatalf("the run ended asking %+v; want one confirmation", reqs)
		}
		l.run(t, context.Background(), "s1", adktools.Answer(reqs[0].ID, false))
		msg, _ := m.response(t, "call-1")["error"].(string)
		if !strings.Contains(msg, "denied approval for refund") || ledger.Applied() != 0 || up.Requests(refunds.Path) != 0 {
			t.Errorf("the model got %q, %d applied; want toolsafe's denial and nothing sent", msg, ledger.Applied())
		}
	})
}
