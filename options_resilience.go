package toolsafe

import (
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
// budget-exceeded. It caps retries in flight, not per call, so give a
// dependency a circuit breaker too. It sets WithRetry's policy.Retry.Budget
// and does nothing without WithRetry. Nil means no budget.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithRetryBudget(b budget.Budget) Option {
	return optionFunc(func(c *config) {
		if c.set(guardBudget, "WithRetryBudget") {
			c.budget = b
		}
	})
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
// WithDestructive).
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
// Denied tells the model approval-denied. One approval covers a call and its
// retries unless WithDestructive; a fallback's alternative passes the same
// gate. A nil a is a configuration error; approval.NewGrants is one to start.
// A tool has one approver: New refuses a second WithApproval (ErrConfig),
// which would leave the first never asked; to ask several, give one
// Approver that asks them all.
func WithApproval(a approval.Approver) Option {
	return optionFunc(func(c *config) {
		if c.set(guardApproval, "WithApproval") {
			c.approver, c.approval = a, true
		}
	})
}

// WithDestructive marks the tool destructive: every attempt, retries
// included, needs an approval of its own (layer.ApproveEachAttempt), so
// a retry after a timeout pauses for a fresh one instead of repeating an
// action nobody re-approved. It requires WithApproval. Without
// WithSideEffects, a destructive tool is taken to have side effects without
// an idempotency key.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithDestructive() Option {
	return optionFunc(func(c *config) {
		if c.set(guardDestructive, "WithDestructive") {
			c.destructive = true
		}
	})
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
