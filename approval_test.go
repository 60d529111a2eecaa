package toolsafe_test

import (
	"context"
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

// The gate inside the composed stack: asked before the breaker, and
// required by New for a destructive tool. (The gate's own behaviour is tested
// in package middleware.)
func TestApproval(t *testing.T) {
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
		toolsafetest.MRKLAction("I must refund order A-1001.", "refund", fixture.RefundInput),
		toolsafetest.MRKLAction("I must refund order A-1001.", "refund", fixture.RefundInput),
		toolsafetest.MRKLAnswer("The refund is applied.", "Order A-1001 was refunded 25 EUR."),
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
