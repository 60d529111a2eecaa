package approval_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestGate(t *testing.T) {
	ran := 0
	tool := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
		ran++
		return "done", nil
	})
	run := func(mode approval.GateMode, g *approval.Grants, attempts int) (int, error) {
		ran = 0
		// The attempt timeout begins each attempt, as inside toolsafe's retry.
		gated := approval.Gate(g, mode)(layer.AttemptTimeout(0)(tool))
		ctx, _ := call.Begin(context.Background(), "refund", "", "A-1", nil)
		for range attempts {
			if _, err := gated.Call(ctx, "A-1"); err != nil {
				return ran, err
			}
		}
		return ran, nil
	}

	t.Run("each attempt of a destructive call uses a grant", func(t *testing.T) {
		g := approval.NewGrants()
		g.Grant("refund", "A-1")
		n, err := run(approval.ApproveEachAttempt, g, 2)
		var ar *approval.Required
		if n != 1 || !errors.As(err, &ar) || ar.Attempt != 2 {
			t.Fatalf("ran %d, err %v; want 1 and a pause at attempt 2", n, err)
		}
		g.Grant("refund", "A-1")
		g.Grant("refund", "A-1")
		if n, err := run(approval.ApproveEachAttempt, g, 2); n != 2 || err != nil {
			t.Fatalf("with two grants: ran %d, err %v; want 2 and nil", n, err)
		}
	})
	t.Run("one grant covers every attempt of a call otherwise", func(t *testing.T) {
		g := approval.NewGrants()
		g.Grant("refund", "A-1")
		if n, err := run(approval.ApproveCall, g, 3); n != 3 || err != nil {
			t.Fatalf("ran %d, err %v; want 3 and nil", n, err)
		}
		if _, err := run(approval.ApproveCall, g, 1); err == nil {
			t.Fatal("the grant covered a second call")
		}
	})
	t.Run("a nil approver pauses every call", func(t *testing.T) {
		if _, err := approval.Gate(nil, approval.ApproveCall)(tool).Call(context.Background(), "A-1"); err == nil {
			t.Fatal("a gate without an approver let the call through")
		}
	})
	t.Run("the zero Decision is Pending", func(t *testing.T) {
		var d approval.Decision
		if d != approval.Pending || d.String() != "pending" {
			t.Fatalf("zero Decision %v", d)
		}
	})
}

func TestResume(t *testing.T) {
	_, paused := call.Begin(context.Background(), "refund", "", `{"order":"A-1","amount":5}`, nil)
	ar := &approval.Required{Tool: "refund", Input: `{"order":"A-1","amount":5}`, CallID: paused.ID(), IdempotencyKey: paused.Key()}
	ctx := run.Resume(context.Background(), ar)

	if _, other := call.Begin(ctx, "refund", "", `{"order":"A-2","amount":5}`, nil); other.Key() == paused.Key() {
		t.Fatal("a call with another input resumed the paused one")
	}
	// The same JSON in another key order and spacing is the same call.
	_, resumed := call.Begin(ctx, "refund", "", `{ "amount": 5, "order": "A-1" }`, nil)
	if resumed.Key() != paused.Key() || resumed.ID() != paused.ID() {
		t.Fatalf("resumed call %s key %s; want %s and %s", resumed.ID(), resumed.Key(), paused.ID(), paused.Key())
	}
	if _, again := call.Begin(ctx, "refund", "", `{"order":"A-1","amount":5}`, nil); again.Key() == paused.Key() {
		t.Fatal("one Resume continued two calls")
	}
	// The model's own call ID wins over the paused call's.
	ctx = run.Resume(context.Background(), ar)
	if _, own := call.Begin(ctx, "refund", "call_model", `{"order":"A-1","amount":5}`, nil); own.ID() != "call_model" || own.Key() != paused.Key() {
		t.Fatalf("resumed call with the model's ID: %s key %s; want call_model and %s", own.ID(), own.Key(), paused.Key())
	}
}

// The gate alone through toolsafe.Wrap, in front of the refund tool on a
// real upstream that counts what it applied. (The gate with the retry, the
// breaker or a fallback is tested at the root.)
func TestApproval(t *testing.T) {
	t.Run("without a grant the call pauses and nothing reaches the upstream", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		tool, srv, _ := testkit.Refunds(t, true, toolsafe.WithApproval(grants))
		out, err := tool.Call(context.Background(), testkit.RefundInput)
		ar := testkit.Paused(t, err)
		if out != "" || ar.Tool != "refund" || ar.Input != testkit.RefundInput || ar.Attempt != 1 || ar.CallID == "" {
			t.Errorf("Call = %q, %+v", out, ar)
		}
		if r := tool.Run(context.Background(), testkit.RefundInput); r.Status() != "paused" || r.Attempts != 0 || r.Observation() != "" {
			t.Errorf("Run: status %q after %d attempts, observation %q; want paused after 0 and none", r.Status(), r.Attempts, r.Observation())
		}
		if p := grants.Pending(); len(p) != 1 || p[0].Tool != "refund" || p[0].Input != testkit.RefundInput {
			t.Errorf("pending %+v; want the refund, once", p)
		}
		if srv.Requests("") != 0 {
			t.Errorf("upstream got %d requests; want 0", srv.Requests(""))
		}
	})

	t.Run("a grant is used once and only for its exact input", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		tool, _, ledger := testkit.Refunds(t, true, toolsafe.WithApproval(grants))
		grants.Grant("refund", testkit.RefundInput)
		if len(grants.Pending()) != 0 {
			t.Fatalf("pending %v before any call", grants.Pending())
		}
		other := `{"order":"A-1001","amount_eur":2500}`
		if _, err := tool.Call(context.Background(), other); err == nil {
			t.Fatal("a grant for 25 EUR approved a refund of 2500 EUR")
		}
		if r := tool.Run(context.Background(), testkit.RefundInput); r.Status() != "ok" {
			t.Fatalf("the granted call: %q (%s)", r.Status(), r.Observation())
		}
		if _, err := tool.Call(context.Background(), testkit.RefundInput); err == nil {
			t.Fatal("the grant was used twice")
		}
		if ledger.Applied() != 1 {
			t.Errorf("%d refunds applied; want 1", ledger.Applied())
		}
	})

	t.Run("a denial reaches the model as approval-denied", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		tool, srv, _ := testkit.Refunds(t, true, toolsafe.WithApproval(grants))
		grants.Deny("refund", testkit.RefundInput)
		r := tool.Run(context.Background(), testkit.RefundInput)
		if testkit.Kind(r) != middleware.KindApprovalDenied || r.Status() != "error" {
			t.Fatalf("got %q, status %q; want approval-denied, error", testkit.Kind(r), r.Status())
		}
		out, err := tool.Call(context.Background(), testkit.RefundInput)
		if _, ok := errors.AsType[*approval.Required](err); !ok {
			t.Errorf("the denial was used twice: %q, %v", out, err)
		}
		if want := "The user denied approval for refund. Do not call it again for this request."; r.Observation() != want {
			t.Errorf("observation %q; want %q", r.Observation(), want)
		}
		if srv.Requests("") != 0 {
			t.Errorf("a denied refund reached the upstream")
		}
	})

	t.Run("an approver that fails pauses the call", func(t *testing.T) {
		t.Parallel()
		broken := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
			return approval.Approved, errors.New("approval service unreachable")
		})
		tool, srv, _ := testkit.Refunds(t, true, toolsafe.WithApproval(broken))
		_, err := tool.Call(context.Background(), testkit.RefundInput)
		if ar := testkit.Paused(t, err); ar.Err == nil || srv.Requests("") != 0 {
			t.Errorf("pause %+v, %d requests; want the approver's error kept and nothing sent", ar, srv.Requests(""))
		}
	})

}
