//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// afterAnswer is a layer that, once the layers inside it have answered,
// waits for its context to end before it returns the answer: it puts the
// moment the call's deadline passes exactly between the tool's answer and
// the retry recording it.
func afterAnswer(next tools.Tool) tools.Tool {
	return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
		out, err := next.Call(ctx, input)
		if err == nil {
			<-ctx.Done() // the deadline passes as the answer comes back
		}
		return out, err
	})
}

// Regression (internal/chaos: "run 4722 (charge c-4705): ok after 1
// attempts in 839ms: charged upstream and queued for later too"): a charge
// that the upstream applied and answered just as the call's deadline
// passed was reported as the deadline's tool-timeout, without "may have
// been applied", and routed to its fallback, which queued the charge a
// second time. failsafe-go's executor replaces an answer recorded after
// its context ended with ctx.Err(); the retry layer took that for the
// attempt's failure, and the side-effect guard had seen a success.
func TestChargeAnsweredAsItsDeadlinePassesIsNotQueuedForLaterToo(t *testing.T) {
	var charged, queued atomic.Int32
	charge := middleware.Func("charge", "charges a card", func(context.Context, string) (string, error) {
		charged.Add(1)
		return "charged", nil
	})
	later := middleware.Func("charge_later", "queues a charge", func(context.Context, string) (string, error) {
		queued.Add(1)
		return "queued", nil
	})
	retry, err := policy.Middleware(&policy.Retry{MaxRetries: 3, Backoff: policy.Constant(time.Millisecond),
		Budget: budget.NewBuilder().Build()})
	if err != nil {
		t.Fatal(err)
	}
	stack := middleware.Chain(layer.Surface(), fallback.To(later).Middleware(nil), layer.Deadline(20*time.Millisecond),
		retry, afterAnswer, layer.GuardSideEffects(middleware.SideEffectsWithKey), layer.AttemptTimeout(0))(charge)
	ctx, c := call.Begin(context.Background(), "charge", "", "{}", nil)
	out, err := stack.Call(ctx, "{}")
	r := c.Result(ctx, out, err)
	if r.Status() != "ok" || r.Output != "charged" || r.Fallback != "" || queued.Load() != 0 || charged.Load() != 1 {
		t.Fatalf("status %s, output %q, fallback %q (%s), charged %d, queued %d; want the charge's own answer, and nothing queued",
			r.Status(), r.Output, r.Fallback, r.Observation(), charged.Load(), queued.Load())
	}
}

// The same crossing through the composed stack, one layer further in: a
// policy of WithPolicies that is still busy with the tool's answer as the
// deadline passes (here a circuit breaker's success listener) does not
// turn the charge into an unknown outcome.
func TestChargeAnsweredAsItsDeadlinePassesInsideWithPoliciesIsOK(t *testing.T) {
	var charged, queued atomic.Int32
	charge := middleware.Func("charge", "charges a card", func(context.Context, string) (string, error) {
		charged.Add(1)
		return "charged", nil
	})
	later := middleware.Func("charge_later", "queues a charge", func(context.Context, string) (string, error) {
		queued.Add(1)
		return "queued", nil
	})
	slow := circuitbreaker.NewBuilder[string]().OnSuccess(func(e failsafe.ExecutionEvent[string]) {
		<-e.Context().Done() // the deadline passes as the answer comes back
	}).Build()
	tool, err := toolsafe.New(charge, toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(time.Millisecond)}),
		toolsafe.WithDeadline(20*time.Millisecond), toolsafe.WithPolicies(slow), toolsafe.WithRetryBudget(budget.NewBuilder().Build()),
		toolsafe.WithFallback(fallback.To(later)))
	if err != nil {
		t.Fatal(err)
	}
	r := tool.Run(context.Background(), "{}")
	if r.Status() != "ok" || r.Output != "charged" || queued.Load() != 0 || charged.Load() != 1 {
		t.Fatalf("status %s, output %q (%s), charged %d, queued %d; want the charge's own answer",
			r.Status(), r.Output, r.Observation(), charged.Load(), queued.Load())
	}
}

// An answer the fallback's alternative gave as the caller gave up stands:
// the alternative acted, and the call does not claim it was cancelled with
// nothing done.
func TestAlternativeAnsweredAsTheCallerGivesUpStands(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	primary := middleware.Func("charge", "charges a card", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("card declined")
	})
	var queued atomic.Int32
	later := middleware.Func("charge_later", "queues a charge", func(context.Context, string) (string, error) {
		queued.Add(1)
		cancel() // the caller gives up as the alternative answers
		return "queued", nil
	})
	tool, err := toolsafe.New(primary, toolsafe.WithFallback(fallback.To(later)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tool.Call(ctx, "{}")
	if err != nil || !strings.Contains(out, "queued") || queued.Load() != 1 {
		t.Fatalf("Call = %q, %v (canceled: %v), queued %d; want the alternative's answer", out, err, errors.Is(err, context.Canceled), queued.Load())
	}
}

// An answer of a side-effecting tool that a layer outside the side-effect
// guard loses (here one that fails the call once the tool has answered)
// leaves the call's outcome unknown: it is never routed to a fallback, and
// the model is told to check first.
func TestAnsweredChargeLostOutsideTheGuardMayHaveBeenApplied(t *testing.T) {
	var queued atomic.Int32
	charge := middleware.Func("charge", "charges a card", func(context.Context, string) (string, error) {
		return "charged", nil
	})
	later := middleware.Func("charge_later", "queues a charge", func(context.Context, string) (string, error) {
		queued.Add(1)
		return "queued", nil
	})
	lose := func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			if _, err := next.Call(ctx, input); err != nil {
				return "", err
			}
			return "", errors.New("the answer was lost on its way back")
		})
	}
	stack := middleware.Chain(layer.Surface(), fallback.To(later).Middleware(nil), lose,
		layer.GuardSideEffects(middleware.SideEffectsWithKey), layer.AttemptTimeout(0))(charge)
	ctx, c := call.Begin(context.Background(), "charge", "", "{}", nil)
	out, err := stack.Call(ctx, "{}")
	r := c.Result(ctx, out, err)
	if r.Failure == nil || r.Failure.SideEffect != middleware.SideEffectUnknown || queued.Load() != 0 ||
		!strings.Contains(r.Observation(), mayHaveApplied) {
		t.Fatalf("%s: %q, queued %d; want an unknown outcome, not routed", r.Status(), r.Observation(), queued.Load())
	}
}
