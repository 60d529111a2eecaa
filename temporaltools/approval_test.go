package temporaltools

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// approvalsOf queries the Run of env's workflow for its Approvals.
func approvalsOf(t *testing.T, env *testsuite.TestWorkflowEnvironment) Approvals {
	t.Helper()
	v, err := env.QueryWorkflow(ApprovalsQuery)
	if err != nil {
		t.Fatal(err)
	}
	var a Approvals
	if err := v.Get(&a); err != nil {
		t.Fatal(err)
	}
	return a
}

// updated is how an update ended, once the test environment ran it.
type updated struct {
	done bool
	rec  approval.Record
	err  error
}

// answer sends the update DecideUpdate; the environment runs it after the
// callback that sends it returns, and fills in the updated.
func answer(env *testsuite.TestWorkflowEnvironment, a Answer) *updated {
	u := &updated{}
	env.UpdateWorkflow(DecideUpdate, "", &testsuite.TestUpdateCallback{
		OnReject: func(err error) { u.done, u.err = true, err },
		OnComplete: func(v any, err error) {
			u.done, u.err = true, err
			if err == nil {
				u.rec = v.(approval.Record)
			}
		},
	}, a)
	return u
}

func TestAPauseWaitsInTheWorkflowForDaysAndTheApprovedCallKeepsItsKey(t *testing.T) {
	var u refunds
	up := toolsafetest.NewUpstream(&u)
	defer up.Close()
	refund := mustNew(t, refundTool(up.URL()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(Decisions(nil)))

	env := newEnv()
	if err := Register(env, refund); err != nil {
		t.Fatal(err)
	}
	input := `{"order":"A-1","amount_eur":25}`
	env.RegisterWorkflowWithOptions(calls(RunOptions{Activity: fast(3)}, call{"refund", input, "c1"}), workflow.RegisterOptions{Name: "agent"})

	var waiting Approvals
	var forged, real, stale *updated
	env.RegisterDelayedCallback(func() {
		waiting = approvalsOf(t, env)
		if len(waiting.Pending) != 1 {
			t.Errorf("after 3 days the run waits for %s", show(waiting))
			return
		}
		if _, applied := u.seen(); applied != 0 {
			t.Errorf("the refund was applied %d times before anyone decided", applied)
		}
		id := waiting.Pending[0].ID
		forged = answer(env, Answer{RequestID: strings.Replace(id, ".1.", ".2.", 1), Decision: approval.Approved, By: "mallory"})
		real = answer(env, Answer{RequestID: id, Decision: approval.Approved, By: "alice", Comment: "ok, order A-1"})
		stale = answer(env, Answer{RequestID: id, Decision: approval.Denied, By: "bob"})
	}, 72*time.Hour)
	env.ExecuteWorkflow("agent")
	res := resultsOf(t, env)

	p := waiting.Pending
	if len(p) != 1 {
		t.Fatal("nothing waited")
	}
	c := p[0].Call
	if c.Tool != "refund" || c.CanonicalInput != `{"amount_eur":25,"order":"A-1"}` || c.CallID != "c1" ||
		c.RunID != "default-test-workflow-id" || c.IdempotencyKey == "" || c.Attempt != 1 {
		t.Fatalf("the request shows %s", show(c))
	}
	for name, u := range map[string]*updated{"a forged request ID": forged, "a second answer": stale} {
		var app *temporal.ApplicationError
		if !u.done || !errors.As(u.err, &app) || app.Type() != errNotPending {
			t.Fatalf("%s was not refused as not pending: %v", name, u.err)
		}
	}
	if !real.done || real.err != nil || real.rec.By != "alice" || real.rec.Comment != "ok, order A-1" {
		t.Fatalf("the answer: %s, %v", show(real.rec), real.err)
	}
	keys, applied := u.seen()
	if applied != 1 || len(keys) != 1 || keys[0] != c.IdempotencyKey {
		t.Fatalf("the upstream applied %d refunds, with the keys %q; want 1 under the paused call's key %q", applied, keys, c.IdempotencyKey)
	}
	r := res[0]
	if r.Status() != "ok" || r.Approval == nil || r.Approval.By != "alice" || r.Approval.RequestID != p[0].ID {
		t.Fatalf("the call ended %s", show(r))
	}
	if got := r.Approval.At.Sub(p[0].Since); got != 72*time.Hour {
		t.Fatalf("the decision came %v after the request, want 72h", got)
	}
}

func TestADenialIsTheModelsMessageAndTheAuditKeepsIt(t *testing.T) {
	var u refunds
	up := toolsafetest.NewUpstream(&u)
	defer up.Close()
	refund := mustNew(t, refundTool(up.URL()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(Decisions(nil)))
	env := newEnv()
	if err := Register(env, refund); err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (Approvals, error) {
		r, err := NewRun(ctx, RunOptions{Activity: fast(3)})
		if err != nil {
			return Approvals{}, err
		}
		res, err := r.Call(ctx, "refund", `{"order":"A-2","amount_eur":900}`, "c1")
		if err != nil {
			return Approvals{}, err
		}
		if res.Kind != middleware.KindApprovalDenied || res.Observation != "The user denied approval for refund. Do not call it again for this request." {
			return Approvals{}, errors.New("the denial reached the model as " + show(res))
		}
		return r.approvals(), nil
	}, workflow.RegisterOptions{Name: "agent"})
	env.RegisterDelayedCallback(func() {
		a := approvalsOf(t, env)
		if len(a.Pending) == 1 {
			answer(env, Answer{RequestID: a.Pending[0].ID, Decision: approval.Denied, By: "bob", Comment: "too much"})
		}
	}, time.Hour)
	env.ExecuteWorkflow("agent")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var a Approvals
	if err := env.GetWorkflowResult(&a); err != nil {
		t.Fatal(err)
	}
	if len(a.Pending) != 0 || len(a.Audit) != 1 || a.Audit[0].By != "bob" || a.Audit[0].Decision != approval.Denied || a.Audit[0].Comment != "too much" {
		t.Fatalf("the approvals after the denial: %s", show(a))
	}
	if _, applied := u.seen(); applied != 0 {
		t.Fatalf("a denied refund was applied %d times", applied)
	}
}

func TestAnApprovalTimeoutTellsTheModelItStillWaits(t *testing.T) {
	refund := mustNew(t, middleware.Func("refund", "d", func(context.Context, string) (string, error) { return "done", nil }),
		toolsafe.WithApproval(Decisions(nil)))
	res := runWorkflow(t, calls(RunOptions{Activity: fast(3), ApprovalTimeout: 48 * time.Hour}, call{"refund", `{}`, "c1"}), refund)
	want := "refund was not called: its time (2 days) ran out while it was still waiting for approval. Tell the user it needs their approval; call refund again once they have given it."
	if res[0].Observation != want || res[0].Kind != middleware.KindTimeout {
		t.Fatalf("the model is told %q, want %q", res[0].Observation, want)
	}
}

func TestADecisionDecidesOnlyTheCallItWasGivenFor(t *testing.T) {
	d := &decision{Decision: approval.Approved, Tool: "refund", CanonicalInput: `{"a":1}`, RunID: "run-1", CallID: "c1"}
	call := approval.CallInfo{Tool: "refund", Input: `{ "a" : 1 }`, RunID: "run-1", CallID: "c1", Attempt: 1}
	for name, c := range map[string]func(*approval.CallInfo){
		"another tool":  func(c *approval.CallInfo) { c.Tool = "charge" },
		"another input": func(c *approval.CallInfo) { c.Input = `{"a":2}` },
		"another run":   func(c *approval.CallInfo) { c.RunID = "run-2" },
		"another call":  func(c *approval.CallInfo) { c.CallID = "c2" },
	} {
		other := call
		c(&other)
		a := &attempt{temporal: 1, decision: d}
		if got, _ := Decisions(nil).Decide(withAttempt(context.Background(), a), other); got != approval.Pending {
			t.Errorf("a decision for the call decided %s: %v", name, got)
		}
	}
	a := &attempt{temporal: 1, decision: d}
	ctx := withAttempt(context.Background(), a)
	if got, _ := Decisions(nil).Decide(ctx, call); got != approval.Approved {
		t.Fatalf("the call it was given for is %v", got)
	}
	if got, _ := Decisions(nil).Decide(ctx, call); got != approval.Pending {
		t.Fatalf("a decision decided a second gate: %v", got)
	}
	destructive := call
	destructive.Destructive = true
	retry := &attempt{temporal: 2, decision: d}
	if got, _ := Decisions(nil).Decide(withAttempt(context.Background(), retry), destructive); got != approval.Pending {
		t.Fatalf("Temporal's retry of a destructive call was %v without a decision of its own", got)
	}
	if p := retry.pauseCall(); p == nil || p.Attempt != 2 || !p.MayHaveApplied || !strings.Contains(p.Reason(), "attempt 2 of a destructive action") {
		t.Fatalf("the retry's request shows %s", show(p))
	}
}
