//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// The gate inside the composed stack: inside the retry (a grant per attempt
// of a destructive call, one grant for every attempt of another), asked
// before the breaker, and required by New for a destructive tool. (What the
// gate does alone is tested in package middleware.)
func TestApproval(t *testing.T) {
	t.Run("no approval is reused: two attempts of a destructive call need two grants", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		tool, srv, ledger := testkit.Refunds(t, true,
			toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}))
		// The first attempt is applied, but its answer is lost.
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset())
		grants.Grant("refund", testkit.RefundInput)

		_, err := tool.Call(context.Background(), testkit.RefundInput)
		ar := testkit.Paused(t, err)
		if ar.Attempt != 2 || !strings.Contains(ar.Reason, "attempt 2") || !strings.Contains(ar.Reason, "may have been applied") {
			t.Errorf("pause %+v; want attempt 2, saying the first may have been applied", ar)
		}
		if srv.Requests("") != 1 || ledger.Applied() != 1 {
			t.Fatalf("%d requests, %d applied; want 1 and 1: the retry waits for its own grant", srv.Requests(""), ledger.Applied())
		}

		// Granted again and resumed: the same call goes on with the same key,
		// and the upstream applies nothing twice.
		grants.Grant("refund", testkit.RefundInput)
		r := tool.Run(run.Resume(context.Background(), ar), testkit.RefundInput)
		if r.Status() != "ok" || r.CallID != ar.CallID {
			t.Fatalf("resumed: %q, call %s; want ok, call %s (%s)", r.Status(), r.CallID, ar.CallID, r.Observation())
		}
		if srv.Requests("") != 2 || ledger.Applied() != 1 {
			t.Errorf("%d requests, %d applied; want 2 and 1", srv.Requests(""), ledger.Applied())
		}
	})

	t.Run("one grant covers the retries of a call that is not destructive", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		tool, srv, ledger := testkit.Refunds(t, true,
			toolsafe.WithApproval(grants),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}))
		srv.Enqueue(refunds.Path, toolsafetest.Reset(), toolsafetest.Reset())
		grants.Grant("refund", testkit.RefundInput)
		r := tool.Run(context.Background(), testkit.RefundInput)
		if r.Status() != "ok" || r.Attempts != 3 || ledger.Applied() != 1 {
			t.Fatalf("%q after %d attempts, %d applied; want ok after 3, 1", r.Status(), r.Attempts, ledger.Applied())
		}
	})

	t.Run("a pause moves no circuit breaker and takes no probe for good", func(t *testing.T) {
		t.Parallel()
		grants := approval.NewGrants()
		cb := policy.NewCircuitBreaker("refunds", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond})
		tool, _, _ := testkit.Refunds(t, true, toolsafe.WithApproval(grants), toolsafe.WithCircuitBreaker(cb))
		cb.Open()
		testkit.HalfOpen(cb)
		for range 3 {
			if _, err := tool.Call(context.Background(), testkit.RefundInput); err == nil {
				t.Fatal("no pause")
			}
		}
		// The gate is asked before the breaker: a pause never reaches it.
		if cb.IsClosed() || cb.Metrics().Executions() != 0 {
			t.Fatalf("breaker %v with %d executions; want still not closed, with 0", cb.State(), cb.Metrics().Executions())
		}
		grants.Grant("refund", testkit.RefundInput)
		if r := tool.Run(context.Background(), testkit.RefundInput); r.Status() != "ok" || !cb.IsClosed() {
			t.Fatalf("%q, breaker %v; want ok and closed", r.Status(), cb.State())
		}
	})

	t.Run("a destructive tool needs an approver", func(t *testing.T) {
		t.Parallel()
		_, err := toolsafe.New(refunds.Tool("http://127.0.0.1:1", nil, true), toolsafe.WithDestructive())
		if err == nil || !strings.Contains(err.Error(), "add WithApproval") {
			t.Errorf("err = %v; want it to ask for WithApproval", err)
		}
		_, err = toolsafe.New(refunds.Tool("http://127.0.0.1:1", nil, true), toolsafe.WithApproval(nil))
		if err == nil || !strings.Contains(err.Error(), "the approver is nil") {
			t.Errorf("err = %v; want a nil approver named", err)
		}
	})

}

// Through a real langchaingo run: the pause stops the run and errors.As
// finds it in the executor's error.
func TestApprovalPausesAnAgentRun(t *testing.T) {
	grants := approval.NewGrants()
	refund, _, ledger := testkit.Refunds(t, true, toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	var ran atomic.Int32
	script := []string{
		toolsafetest.MRKLAction("I must refund order A-1001.", "refund", testkit.RefundInput),
		toolsafetest.MRKLAction("I must refund order A-1001.", "refund", testkit.RefundInput),
		toolsafetest.MRKLAnswer("The refund is applied.", "Order A-1001 was refunded 25 EUR."),
	}
	llm := fake.NewFakeLLM(script)
	runAgent := func(ctx context.Context) (map[string]any, error) {
		ran.Add(1)
		agent := agents.NewOneShotAgent(llm, []tools.Tool{refund})
		return agents.NewExecutor(agent, agents.WithMaxIterations(4)).Call(ctx, map[string]any{"input": "Refund order A-1001, 25 EUR."})
	}

	_, err := runAgent(context.Background())
	ar := testkit.Paused(t, err)
	if ledger.Applied() != 0 || len(grants.Pending()) != 1 {
		t.Fatalf("%d applied, pending %v; want 0 and the refund", ledger.Applied(), grants.Pending())
	}
	grants.Grant(ar.Tool, ar.Input)
	out, err := runAgent(run.Resume(context.Background(), ar))
	if err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	if got, _ := out["output"].(string); !strings.Contains(got, "refunded") || ledger.Applied() != 1 {
		t.Errorf("output %q, %d applied; want the refund, applied once", got, ledger.Applied())
	}
}

// When the deadline passes while the gate waits for the approver, the model
// is told the tool was not called because approval had not come, not that it
// did not answer; and the call does not fall back around the approval.
func TestApprovalTimeoutMessage(t *testing.T) {
	waits := approval.ApproverFunc(func(ctx context.Context, _ approval.CallInfo) (approval.Decision, error) {
		<-ctx.Done()
		return approval.Pending, ctx.Err()
	})

	t.Run("before the first attempt", func(t *testing.T) {
		t.Parallel()
		var ran, altCalls atomic.Int32
		w := toolsafe.Wrap(testkit.Refund(&ran), toolsafe.WithApproval(waits), toolsafe.WithDeadline(50*time.Millisecond),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Counting("issue_credit", &altCalls)))))
		r := testkit.Within(t, 10*time.Second, w, context.Background(), "A-1")
		f := r.Failure
		if f == nil || f.Kind != middleware.KindTimeout || f.WaitingFor != call.WaitingForApproval || f.Attempts != 0 ||
			f.SideEffect != middleware.SideEffectNone || f.Retryable || f.Timeout != 50*time.Millisecond {
			t.Fatalf("got %+v; want a tool-timeout still waiting for approval, no attempt, no side effect", r)
		}
		if ran.Load() != 0 || altCalls.Load() != 0 || r.Fallback != "" {
			t.Errorf("the tool ran %d times, its fallback %d (%q); want neither", ran.Load(), altCalls.Load(), r.Fallback)
		}
		want := "refund was not called: its time (50ms) ran out while it was still waiting for approval. Tell the user it needs their approval; call refund again once they have given it."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})

	t.Run("before a retry of a destructive tool", func(t *testing.T) {
		t.Parallel()
		var ran atomic.Int32
		tool := middleware.Func("refund", "", func(context.Context, string) (string, error) {
			ran.Add(1)
			return "", middleware.Transient(errors.New("busy"))
		})
		first := approval.ApproverFunc(func(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
			if c.Attempt == 1 {
				return approval.Approved, nil
			}
			return waits(ctx, c)
		})
		w := toolsafe.Wrap(tool, toolsafe.WithApproval(first, approval.ApproveEachAttempt), toolsafe.WithDeadline(100*time.Millisecond),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey), // so the failed attempt is retried
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}))
		r := testkit.Within(t, 10*time.Second, w, context.Background(), "A-1")
		if ran.Load() != 1 || r.Failure == nil || r.Failure.Attempts != 1 {
			t.Fatalf("got %+v after %d runs; want 1 attempt, then a wait for the second's approval", r, ran.Load())
		}
		want := "refund failed after 1 attempt, and the next attempt was not made: its time (100ms) ran out while it was still waiting for approval. The action may have been applied; check before calling again. Tell the user it needs their approval; call refund again once they have given it."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})
}

// Regression (issue 32, item 8): runs A and B paused on the same refund;
// the person approved what the inbox showed as run B's, run A's resumed
// call used the approval, and the audit said run B.
func TestAnApprovalGivenForOneRunsRequestLetsNoOtherRunsCallThrough(t *testing.T) {
	grants := approval.NewGrants()
	tool, _, upstream := testkit.Refunds(t, true, toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	ledger := run.NewMemoryLedger()
	paused := map[string]*approval.Required{}
	for _, id := range []string{"run-A", "run-B"} {
		_, err := tool.Call(run.With(context.Background(), id, ledger), testkit.RefundInput)
		paused[id] = testkit.Paused(t, err)
	}
	reqs := grants.Requests()
	if len(reqs) != 2 || reqs[0].Call.RunID != "run-A" || reqs[1].Call.RunID != "run-B" {
		t.Fatalf("requests %+v; want run A's and run B's", reqs)
	}
	if _, err := grants.Answer(reqs[1].ID, approval.Approved, "alice", ""); err != nil {
		t.Fatal(err)
	}
	// Run A resumes first: its call is not the one approved.
	_, err := tool.Call(run.Resume(run.With(context.Background(), "run-A", ledger), paused["run-A"]), testkit.RefundInput)
	if ar := testkit.Paused(t, err); ar.RunID != "run-A" || upstream.Applied() != 0 {
		t.Fatalf("run A resumed: paused %+v, %d applied; want run A paused again, nothing applied", ar, upstream.Applied())
	}
	r := tool.Run(run.Resume(run.With(context.Background(), "run-B", ledger), paused["run-B"]), testkit.RefundInput)
	if r.Status() != "ok" || upstream.Applied() != 1 {
		t.Fatalf("run B resumed: %q (%s), %d applied; want ok, one refund", r.Status(), r.Observation(), upstream.Applied())
	}
	if audit := grants.Audit(0); len(audit) != 1 || audit[0].Call.RunID != "run-B" {
		t.Fatalf("audit %+v; want run B's, whose call ran", audit)
	}
	if rs := grants.Requests(); len(rs) != 1 || rs[0].Call.RunID != "run-A" {
		t.Fatalf("requests %+v; want run A's still waiting", rs)
	}
}
