package toolsafe_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/fixture"
	"github.com/toolsafe/toolsafe/internal/outcome"
	"github.com/toolsafe/toolsafe/internal/refunds"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestApproval(t *testing.T) {
	t.Run("without a grant the call pauses and nothing reaches the upstream", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		tool, srv, _ := fixture.Refunds(t, true, toolsafe.WithApproval(grants))
		out, err := tool.Call(context.Background(), fixture.RefundInput)
		ar := outcome.Paused(t, err)
		if out != "" || ar.Tool != "refund" || ar.Input != fixture.RefundInput || ar.Attempt != 1 || ar.CallID == "" {
			t.Errorf("Call = %q, %+v", out, ar)
		}
		if r := tool.Run(context.Background(), fixture.RefundInput); r.Status() != "paused" || r.Attempts != 0 || r.Observation() != "" {
			t.Errorf("Run: status %q after %d attempts, observation %q; want paused after 0 and none", r.Status(), r.Attempts, r.Observation())
		}
		if p := grants.Pending(); len(p) != 1 || p[0].Tool != "refund" || p[0].Input != fixture.RefundInput {
			t.Errorf("pending %+v; want the refund, once", p)
		}
		if srv.Requests("") != 0 {
			t.Errorf("upstream got %d requests; want 0", srv.Requests(""))
		}
	})

	t.Run("a grant is used once and only for its exact input", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		tool, _, ledger := fixture.Refunds(t, true, toolsafe.WithApproval(grants))
		grants.Grant("refund", fixture.RefundInput)
		if len(grants.Pending()) != 0 {
			t.Fatalf("pending %v before any call", grants.Pending())
		}
		other := `{"order":"A-1001","amount_eur":2500}`
		if _, err := tool.Call(context.Background(), other); err == nil {
			t.Fatal("a grant for 25 EUR approved a refund of 2500 EUR")
		}
		if r := tool.Run(context.Background(), fixture.RefundInput); r.Status() != "ok" {
			t.Fatalf("the granted call: %q (%s)", r.Status(), r.Observation())
		}
		if _, err := tool.Call(context.Background(), fixture.RefundInput); err == nil {
			t.Fatal("the grant was used twice")
		}
		if ledger.Applied() != 1 {
			t.Errorf("%d refunds applied; want 1", ledger.Applied())
		}
	})

	t.Run("a denial reaches the model as approval-denied", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		tool, srv, _ := fixture.Refunds(t, true, toolsafe.WithApproval(grants))
		grants.Deny("refund", fixture.RefundInput)
		r := tool.Run(context.Background(), fixture.RefundInput)
		if outcome.Kind(r) != middleware.KindApprovalDenied || r.Status() != "error" {
			t.Fatalf("got %q, status %q; want approval-denied, error", outcome.Kind(r), r.Status())
		}
		out, err := tool.Call(context.Background(), fixture.RefundInput)
		if _, ok := errors.AsType[*middleware.ApprovalRequired](err); !ok {
			t.Errorf("the denial was used twice: %q, %v", out, err)
		}
		if want := "The user denied approval for refund. Do not call it again for this request."; r.Observation() != want {
			t.Errorf("observation %q; want %q", r.Observation(), want)
		}
		if srv.Requests("") != 0 {
			t.Errorf("a denied refund reached the upstream")
		}
	})

	t.Run("no approval is reused: two attempts of a destructive call need two grants", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		tool, srv, ledger := fixture.Refunds(t, true,
			toolsafe.WithApproval(grants), toolsafe.WithDestructive(),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: fixture.Backoff(time.Millisecond)}))
		// The first attempt is applied, but its answer is lost.
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset())
		grants.Grant("refund", fixture.RefundInput)

		_, err := tool.Call(context.Background(), fixture.RefundInput)
		ar := outcome.Paused(t, err)
		if ar.Attempt != 2 || !strings.Contains(ar.Reason, "attempt 2") || !strings.Contains(ar.Reason, "may have been applied") {
			t.Errorf("pause %+v; want attempt 2, saying the first may have been applied", ar)
		}
		if srv.Requests("") != 1 || ledger.Applied() != 1 {
			t.Fatalf("%d requests, %d applied; want 1 and 1: the retry waits for its own grant", srv.Requests(""), ledger.Applied())
		}

		// Granted again and resumed: the same call goes on with the same key,
		// and the upstream applies nothing twice.
		grants.Grant("refund", fixture.RefundInput)
		r := tool.Run(middleware.Resume(context.Background(), ar), fixture.RefundInput)
		if r.Status() != "ok" || r.CallID != ar.CallID {
			t.Fatalf("resumed: %q, call %s; want ok, call %s (%s)", r.Status(), r.CallID, ar.CallID, r.Observation())
		}
		if srv.Requests("") != 2 || ledger.Applied() != 1 {
			t.Errorf("%d requests, %d applied; want 2 and 1", srv.Requests(""), ledger.Applied())
		}
	})

	t.Run("one grant covers the retries of a call that is not destructive", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		tool, srv, ledger := fixture.Refunds(t, true,
			toolsafe.WithApproval(grants),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: fixture.Backoff(time.Millisecond)}))
		srv.Enqueue(refunds.Path, toolsafetest.Reset(), toolsafetest.Reset())
		grants.Grant("refund", fixture.RefundInput)
		r := tool.Run(context.Background(), fixture.RefundInput)
		if r.Status() != "ok" || r.Attempts != 3 || ledger.Applied() != 1 {
			t.Fatalf("%q after %d attempts, %d applied; want ok after 3, 1", r.Status(), r.Attempts, ledger.Applied())
		}
	})

	t.Run("a pause moves no circuit breaker and takes no probe for good", func(t *testing.T) {
		t.Parallel()
		grants := middleware.NewGrants()
		cb := policy.NewCircuitBreaker("refunds", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond})
		tool, _, _ := fixture.Refunds(t, true, toolsafe.WithApproval(grants), toolsafe.WithCircuitBreaker(cb))
		cb.Open()
		fixture.HalfOpen(cb)
		for range 3 {
			if _, err := tool.Call(context.Background(), fixture.RefundInput); err == nil {
				t.Fatal("no pause")
			}
		}
		// The gate is asked before the breaker: a pause never reaches it.
		if cb.IsClosed() || cb.Metrics().Executions() != 0 {
			t.Fatalf("breaker %v with %d executions; want still not closed, with 0", cb.State(), cb.Metrics().Executions())
		}
		grants.Grant("refund", fixture.RefundInput)
		if r := tool.Run(context.Background(), fixture.RefundInput); r.Status() != "ok" || !cb.IsClosed() {
			t.Fatalf("%q, breaker %v; want ok and closed", r.Status(), cb.State())
		}
	})

	t.Run("an approver that fails pauses the call", func(t *testing.T) {
		t.Parallel()
		broken := middleware.ApproverFunc(func(context.Context, middleware.CallInfo) (middleware.Decision, error) {
			return middleware.Approved, errors.New("approval service unreachable")
		})
		tool, srv, _ := fixture.Refunds(t, true, toolsafe.WithApproval(broken))
		_, err := tool.Call(context.Background(), fixture.RefundInput)
		if ar := outcome.Paused(t, err); ar.Err == nil || srv.Requests("") != 0 {
			t.Errorf("pause %+v, %d requests; want the approver's error kept and nothing sent", ar, srv.Requests(""))
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
	grants := middleware.NewGrants()
	refund, _, ledger := fixture.Refunds(t, true, toolsafe.WithApproval(grants), toolsafe.WithDestructive())
	var ran atomic.Int32
	script := []string{
		"Thought: I must refund order A-1001.\nAction: refund\nAction Input: " + fixture.RefundInput,
		"Thought: I must refund order A-1001.\nAction: refund\nAction Input: " + fixture.RefundInput,
		"Thought: The refund is applied.\nFinal Answer: Order A-1001 was refunded 25 EUR.",
	}
	llm := fake.NewFakeLLM(script)
	run := func(ctx context.Context) (map[string]any, error) {
		ran.Add(1)
		agent := agents.NewOneShotAgent(llm, []tools.Tool{refund})
		return agents.NewExecutor(agent, agents.WithMaxIterations(4)).Call(ctx, map[string]any{"input": "Refund order A-1001, 25 EUR."})
	}

	_, err := run(context.Background())
	ar := outcome.Paused(t, err)
	if ledger.Applied() != 0 || len(grants.Pending()) != 1 {
		t.Fatalf("%d applied, pending %v; want 0 and the refund", ledger.Applied(), grants.Pending())
	}
	grants.Grant(ar.Tool, ar.Input)
	out, err := run(middleware.Resume(context.Background(), ar))
	if err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	if got, _ := out["output"].(string); !strings.Contains(got, "refunded") || ledger.Applied() != 1 {
		t.Errorf("output %q, %d applied; want the refund, applied once", got, ledger.Applied())
	}
}
