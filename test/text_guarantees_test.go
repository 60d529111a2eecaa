package test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// Regression (issue "exactly once under store faults", item 3): inputs
// that are not valid UTF-8 compared equal ({"acct":"\xff"} and
// {"acct":"\xfe"} both read as U+FFFD), so a grant for one covered the
// other and a resumed run replayed the wrong record. Such input is
// args-invalid (RFC 8259 §8.1), refused before any gate, ledger, loop
// guard or attempt, whatever the tool's options.
func TestInputsThatAreNotValidUTF8AreRefusedBeforeAnyLayer(t *testing.T) {
	var calls, asked atomic.Int32
	grants := approval.NewGrants()
	approver := approval.ApproverFunc(func(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
		asked.Add(1)
		return grants.Decide(ctx, c)
	})
	inner := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "refunded", nil
	})
	gated := toolsafe.Wrap(inner, toolsafe.WithApproval(approver),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithCallLimits(run.Limits{PerTool: 1}))
	plain := toolsafe.Wrap(inner)
	ledger := run.NewMemoryLedger()
	ctx := run.With(context.Background(), "run-1", ledger)
	grants.Grant("refund", "{\"acct\":\"\xff\"}")
	for _, in := range []string{"{\"acct\":\"\xfe\"}", "{\"acct\":\"\xff\"}", `{"acct":"\ud800"}`, "not JSON \xff"} {
		for _, tool := range []*toolsafe.Tool{gated, plain} {
			r := tool.Run(ctx, in)
			if r.Kind() != middleware.KindArgsInvalid || r.Attempts != 0 {
				t.Errorf("%q: %v after %d attempts (%q); want args-invalid, no attempt", in, r.Kind(), r.Attempts, r.Observation())
			}
			if !strings.HasPrefix(r.Observation(), "refund was not called: the input is invalid") {
				t.Errorf("%q: the model is told %q", in, r.Observation())
			}
		}
	}
	entries, _ := ledger.Entries(context.Background(), "run-1")
	if calls.Load() != 0 || asked.Load() != 0 || len(entries) != 0 {
		t.Fatalf("the tool ran %d times, the approver was asked %d times, the ledger holds %v; want none of them", calls.Load(), asked.Load(), entries)
	}
	// The refusals counted against no limit: the run's one call still runs.
	grants.Grant("refund", `{"acct":"A-1"}`)
	if r := gated.Run(ctx, `{"acct":"A-1"}`); r.Status() != "ok" || calls.Load() != 1 {
		t.Fatalf("a valid call after the refusals: %q; want it to run", r.Observation())
	}
}

// The sibling in Grants (approval and redisstore key decisions alike): a decision or a pause for one byte
// string never matches another that Go would decode alike.
func TestGrantsNeverMatchInputsThatAreNotValidUTF8(t *testing.T) {
	g := approval.NewGrants()
	g.Grant("refund", "{\"acct\":\"\xff\"}")
	g.Grant("refund", `{"acct":"\ud800"}`)
	for _, in := range []string{"{\"acct\":\"\xfe\"}", `{"acct":"\udfff"}`, `{"acct":"\ufffd"}`, "{\"acct\":\"\ufffd\"}"} {
		if d, _ := g.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: in}); d != approval.Pending {
			t.Errorf("a grant for another input decided %q: %v", in, d)
		}
	}
}
