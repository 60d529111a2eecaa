package adktools_test

import (
	"context"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// Regression: the user's confirmation sent twice (a double click, a
// retried request) resumed the paused refund twice: ADK runs the
// confirmed call again for each answer, and Confirmations approved it
// each time, the second time under a new idempotency key, so the refund
// was applied twice. A confirmation now counts once: for the pause kept
// in the session's state, which the first resume uses up.
func TestAConfirmationSentTwiceAppliesTheRefundOnce(t *testing.T) {
	ledger := refunds.NewLedger()
	up := toolsafetest.NewUpstream(ledger.Handler())
	t.Cleanup(up.Close)
	w := adktools.Wrap(refund(t, up.URL()), toolsafe.WithApproval(adktools.Confirmations(nil)),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	m := script(calls(call("call-1", "refund", map[string]any{"order": "A-1001", "amount_eur": 900})),
		say("Refunded."), say("Refunded."))
	l := newLoop(t, m, w)
	evs := l.run(t, context.Background(), "s1", ask("Refund A-1001 900 EUR."))
	reqs := adktools.Requests(evs[len(evs)-1])
	if len(reqs) != 1 {
		t.Fatalf("the run ended asking %+v; want one confirmation", reqs)
	}
	runAll(l, adktools.Answer(reqs[0].ID, true))
	runAll(l, adktools.Answer(reqs[0].ID, true)) // the same answer again
	if ledger.Applied() != 1 {
		t.Fatalf("%d refunds applied from %d requests; want 1", ledger.Applied(), up.Requests(refunds.Path))
	}
}
