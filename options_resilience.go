package toolsafe

import (
	"fmt"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// WithCircuitBreaker asks cb for a permit before every attempt, after the
// approval gate; while cb is open the call fails at once with circuit-open,
// not retried. Share one breaker among the tools of a dependency
// (policy.NewCircuitBreaker names it for the model's message;
// policy.FromCircuitBreaker adopts a failsafe-go one). Nil means none.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithCircuitBreaker(cb circuitbreaker.CircuitBreaker[string]) Option {
	return optionFunc(func(c *config) {
		if c.set(guardBreaker, "WithCircuitBreaker") {
			c.breaker = policy.FromCircuitBreaker("", cb)
		}
	})
}

// WithBulkhead limits the attempts in flight to the dependency guarded by
// b, over every tool given the same b; when it is full, the call fails with
// tool-busy, not retried. An attempt the attempt timeout abandoned keeps its
// permit until the tool really returns. See policy.NewBulkhead. Nil means no
// bulkhead.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithBulkhead(b *policy.Bulkhead) Option {
	return optionFunc(func(c *config) {
		if c.set(guardBulkhead, "WithBulkhead") {
			c.bulkhead = b
		}
	})
}

// WithRetryBudget shares a failsafe-go retry budget among the tools given the
// same b: a retry past its share of the attempts in flight ends the call with
// budget-exceeded. It does nothing without WithRetry. Nil means no budget.
// Given twice, or beside a policy.Retry.Budget, New refuses it (ErrConfig).
//
// Deprecated: give the budget on the retry it limits:
// WithRetry(policy.Retry{MaxRetries: 3, Budget: b}).
func WithRetryBudget(b budget.Budget) Option {
	return optionFunc(func(c *config) { c.setBudget("WithRetryBudget", b) })
}

// WithPolicies runs failsafe-go policies of your own (a rate limiter, a cache,
// a hedge, an adaptive limiter) on every attempt, inside the retry and the
// approval gate, outside the breaker; the first is outermost, and a refusal
// ends the call with the kind middleware.Classify gives it. New refuses a
// retry, hedge, fallback or cache policy on a tool with side effects or a
// gate: give it WithRetry and WithFallback instead. A nil policy is an error.
func WithPolicies(ps ...failsafe.Policy[string]) Option {
	return optionFunc(func(c *config) { c.policies = append(c.policies, ps...) })
}

// WithSideEffects says whether the tool changes something upstream and
// whether it sends the call's idempotency key (middleware.SideEffects). An
// attempt that may have been applied marks the outcome unknown: the model is
// told to check before calling again, and no fallback runs after it. The
// default is middleware.NoSideEffects (SideEffectsWithoutKey with
// approval.ApproveEachAttempt).
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithSideEffects(s middleware.SideEffects) Option {
	return optionFunc(func(c *config) {
		if c.set(guardSideEffects, "WithSideEffects") {
			c.sideEffects, c.sideSet = s, true
		}
	})
}

// WithApproval asks a before the tool runs, inside the retry and before any
// breaker or bulkhead permit: Pending pauses the run with *approval.Required,
// Denied tells the model approval-denied. mode says how often a is asked:
// approval.ApproveCall (the default: one approval covers a call and its
// retries) or approval.ApproveEachAttempt, for a destructive tool (every
// attempt, retries included, needs an approval of its own, and without
// WithSideEffects the tool is taken to have side effects without an
// idempotency key): WithApproval(grants, approval.ApproveEachAttempt) is the
// one way to say so. More than one mode is a configuration error. A
// fallback's alternative passes the same gate. A nil a is a configuration
// error; approval.NewGrants is one to start.
// A tool has one approver: New refuses a second WithApproval (ErrConfig),
// which would leave the first never asked; to ask several, give one
// Approver that asks them all. A mode beside the deprecated WithDestructive
// is refused too.
func WithApproval(a approval.Approver, mode ...approval.GateMode) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardApproval, "WithApproval") {
			return
		}
		c.approver, c.approval = a, true
		switch {
		case len(mode) > 1:
			c.errs = append(c.errs, fmt.Errorf("WithApproval takes one approval.GateMode, not %d: give approval.ApproveCall or approval.ApproveEachAttempt once", len(mode)))
		case len(mode) == 1:
			c.setGateMode("WithApproval's approval.GateMode", mode[0])
		}
	})
}

// setGateMode records how often the tool's approver is asked, set by the
// option called name, once.
func (c *config) setGateMode(name string, m approval.GateMode) {
	if !c.set(guardDestructive, name) {
		return
	}
	switch m {
	case approval.ApproveCall:
	case approval.ApproveEachAttempt:
		c.destructive = true
	default:
		c.errs = append(c.errs, fmt.Errorf("approval gate mode %d is unknown: use approval.ApproveCall or approval.ApproveEachAttempt", int(m)))
	}
}

// WithDestructive marks the tool destructive: every attempt, retries
// included, needs an approval of its own, so a retry after a timeout pauses
// for a fresh one instead of repeating an action nobody re-approved. It
// requires WithApproval. Without WithSideEffects, a destructive tool is
// taken to have side effects without an idempotency key.
// Given twice, or beside WithApproval's approval.GateMode, New refuses it
// (ErrConfig).
//
// Deprecated: say it with the approver:
// WithApproval(a, approval.ApproveEachAttempt).
func WithDestructive() Option {
	return optionFunc(func(c *config) { c.setGateMode("WithDestructive", approval.ApproveEachAttempt) })
}

// WithFallback routes a call that failed for good to f's alternative tool
// (package fallback), never one whose action may have been applied, a pause
// or a cancellation. A *Tool alternative runs through its own layers; a plain
// one once, with this tool's attempt timeout, deadline, gate, logger and
// tracing. An invalid f is a configuration error. See ExampleWithFallback.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithFallback(f fallback.Fallback) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardFallback, "WithFallback") {
			return
		}
		if err := f.Err(); err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.fallback = &f
	})
}
