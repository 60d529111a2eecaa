package adktools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// Regression: arguments ADK handed over with a string that is not UTF-8
// (from a model backend of the program's own) were marshalled with U+FFFD
// in place of the bad bytes: the approver was asked about, and a grant
// matched, text other than what the tool was then given, so one grant
// covered every order name spelled with different bad bytes. They are
// args-invalid now, before any gate, and nothing runs.
func TestArgumentsThatAreNotUTF8AreRefusedBeforeTheGate(t *testing.T) {
	ledger := refunds.NewLedger()
	up := toolsafetest.NewUpstream(ledger.Handler())
	t.Cleanup(up.Close)
	grants := approval.NewGrants()
	grants.Grant("refund", `{"amount_eur":25,"order":"A-10\uFFFD"}`)
	w := adktools.Wrap(refund(t, up.URL()), toolsafe.WithApproval(grants),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	m := script(calls(call("call-1", "refund", map[string]any{"order": "A-10\xff", "amount_eur": 25})), say("Done."))
	l := newLoop(t, m, w)
	l.run(t, context.Background(), "s1", ask("Refund A-10."))
	msg, _ := m.response(t, "call-1")["error"].(string)
	if ledger.Applied() != 0 || up.Requests(refunds.Path) != 0 || !strings.Contains(msg, "not UTF-8") {
		t.Fatalf("%d refunds applied; the model got %q; want none, and the argument refused as not UTF-8", ledger.Applied(), msg)
	}
	if len(grants.Pending()) != 0 {
		t.Errorf("the approver was asked about %+v; want nothing asked", grants.Pending())
	}
}
