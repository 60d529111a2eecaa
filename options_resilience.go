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
// approval gate, and fails the call at once with circuit-open, not retried,
// while cb is open. Only transient failures and timeouts of attempts that
// reached the tool count as failures; see policy.CircuitBreaker for what
// counts and why.
//
// Share one breaker among the tools of a dependency. Make it with
// policy.NewCircuitBreaker, which names the dependency for the model's
// message, or adopt a failsafe-go breaker once with
// policy.FromCircuitBreaker. A plain failsafe-go breaker works too: its
// state is shared, but each tool then keeps its own account of cancelled
// half-open probes (so, in a rare race, one extra probe may run) and the
// message cannot name the dependency. Nil means no circuit breaker.
func WithCircuitBreaker(cb circuitbreaker.CircuitBreaker[string]) Option {
	return optionFunc(func(c *config) { c.breaker = policy.FromCircuitBreaker("", cb) })
}

// WithBulkhead limits the attempts in flight to the dependency guarded by
// b, over every tool given the same b; when it is full, the call fails with
// tool-busy, not retried. An attempt the attempt timeout abandoned keeps its
// permit until the tool really returns. See policy.NewBulkhead. Nil means no
// bulkhead.
func WithBulkhead(b *policy.Bulkhead) Option {
	return optionFunc(func(c *config) { c.bulkhead = b })
}

// WithRetryBudget shares a failsafe-go retry budget among the tools given
// the same b: when retries would exceed its share of the attempts in
// flight, the failed attempt ends the call with budget-exceeded instead of
// retrying. budget.NewBuilder().WithMaxRate(0.2).Build() lets retries be at
// most a fifth of the attempts in flight (but always at least its minimum
// concurrency, 3 by default). It sets policy.Retry.Budget of WithRetry; it
// does nothing for a tool without WithRetry. Nil means no budget.
//
// The budget caps retries in flight, not retries per call: against an
// upstream that fails fast, few retries are ever in flight at once and it
// barely lowers the load (3.98 requests per call instead of 4.00 in the
// README's storm); against one that hangs it does (1.35). Give a
// dependency a circuit breaker too.
func WithRetryBudget(b budget.Budget) Option {
	return optionFunc(func(c *config) { c.budget = b })
}

// WithPolicies runs failsafe-go policies of your own on every attempt:
// inside the retry and the approval gate, outside the circuit breaker, the
// bulkhead and the attempt timeout (a rate limiter, a cache, a hedge, an
// adaptive limiter or throttler), the first outermost. A refusal of theirs
// ends the call with the kind middleware.Classify gives it (a rate
// limiter's or a limiter's with tool-busy), not retried. Several
// WithPolicies add up; a nil policy is an error.
//
// A policy that runs an attempt again or answers in its place (a
// failsafe-go retry policy, hedge policy or fallback) would do so behind
// the approval gate and the side-effect guard, so New refuses one on a tool
// with side effects (WithSideEffects, WithDestructive) or an approval gate
// (WithApproval): give such a tool WithRetry and WithFallback instead. On a
// tool that only reads, a hedge is fine.
func WithPolicies(ps ...failsafe.Policy[string]) Option {
	return optionFunc(func(c *config) { c.policies = append(c.policies, ps...) })
}

// WithSideEffects says whether the tool changes something upstream and
// whether it sends the call's idempotency key (see middleware.SideEffects).
// Any attempt that reached the tool and may have been applied (a timeout, a
// reset connection, a deadline or the caller cutting it short) marks the
// call's outcome unknown: the model is told to check before calling again,
// and no fallback runs after it. A tool with
// middleware.SideEffectsWithoutKey is not retried after such an attempt.
// The default is middleware.NoSideEffects, or SideEffectsWithoutKey for a
// tool made WithDestructive.
func WithSideEffects(s middleware.SideEffects) Option {
	return optionFunc(func(c *config) { c.sideEffects, c.sideSet = s, true })
}

// WithApproval asks a before the tool runs (the approval gate, inside the
// retry, before any circuit breaker or bulkhead permit is taken): Pending
// pauses the agent run with *approval.Required, Denied tells the
// model approval-denied. One approval covers a call and its retries,
// unless WithDestructive makes every attempt ask again. The gate cannot be
// bypassed: a fallback's plain alternative runs behind the same approver,
// asked about the alternative's name and input; a *Tool alternative keeps
// its own gate, or gets this one when it has none; a nil a is a
// configuration error. approval.NewGrants is an Approver to start with.
func WithApproval(a approval.Approver) Option {
	return optionFunc(func(c *config) { c.approver, c.approval = a, true })
}

// WithDestructive marks the tool destructive: every attempt, retries
// included, needs an approval of its own (layer.ApproveEachAttempt), so
// a retry after a timeout pauses for a fresh one instead of repeating an
// action nobody re-approved. It requires WithApproval. Without
// WithSideEffects, a destructive tool is taken to have side effects without
// an idempotency key.
func WithDestructive() Option {
	return optionFunc(func(c *config) { c.destructive = true })
}

// WithFallback routes the call to f's alternative tool when the primary
// fails for good (see package fallback), inside argument validation and
// outside the deadline and retries. An invalid f (a nil alternative, a kind
// that is never routed) is a configuration error. No call whose action may
// have been applied is routed.
//
// The alternative is a call of its own, after the primary's retries and
// outside its deadline, and it is never called bare:
//   - a *Tool runs through its own layers, with its own limits (and this
//     tool's approval gate when it has none and this tool has one);
//   - a plain tools.Tool runs through toolsafe's layers with this tool's
//     attempt timeout (WithTimeout), deadline (WithDeadline), approval gate
//     (WithApproval, WithDestructive), logger and tracing, and no retries:
//     one attempt, its panic recovered as tool-panic, and the call returns
//     when that attempt's time is up even if the alternative ignores its
//     context (tool-timeout). With neither limit set, only the caller's
//     context bounds it.
//
// So a call that falls back takes at most this tool's deadline plus the
// alternative's: the same deadline again for a plain alternative (its
// attempt timeout, when set), a *Tool's own otherwise. An alternative
// already on the call's fallback path is not called (see
// fallback.Fallback.Middleware), so a cycle built in code ends.
func WithFallback(f fallback.Fallback) Option {
	return optionFunc(func(c *config) {
		if err := f.Err(); err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.fallback = &f
	})
}
