package toolsafe

import (
	"errors"
	"fmt"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// resilience holds what the options of this file set; resolve turns it
// into the layers of config once every option has been applied, so their
// order does not matter.
type resilience struct {
	breaker     *policy.CircuitBreaker
	bulkhead    *policy.Bulkhead
	retryBudget budget.Budget
	sideEffects middleware.SideEffects
	approver    middleware.Approver
	approval    bool // WithApproval was given
	destructive bool
	fallback    *fallback.Fallback
}

// WithCircuitBreaker asks cb for a permit before every attempt, and fails
// the call at once with circuit-open, not retried, while cb is open (layer 7
// of DESIGN.md §2). Only transient failures and attempt timeouts count as
// failures; see policy.CircuitBreaker for what counts and why.
//
// Share one breaker among the tools of a dependency. Make it with
// policy.NewCircuitBreaker, which names the dependency for the model's
// message, or adopt a failsafe-go breaker once with
// policy.FromCircuitBreaker. A plain failsafe-go breaker works too: its
// state is shared, but each tool then keeps its own account of cancelled
// half-open probes (so, in a rare race, one extra probe may run) and the
// message cannot name the dependency. Nil means no circuit breaker.
func WithCircuitBreaker(cb circuitbreaker.CircuitBreaker[string]) Option {
	return optionFunc(func(c *config) { c.res.breaker = policy.FromCircuitBreaker("", cb) })
}

// WithBulkhead limits the attempts in flight to the dependency guarded by
// b, over every tool given the same b (layer 7); when it is full, the call
// fails with tool-busy, not retried. An attempt the attempt timeout
// abandoned keeps its permit until the tool really returns. See
// policy.NewBulkhead. Nil means no bulkhead.
func WithBulkhead(b *policy.Bulkhead) Option {
	return optionFunc(func(c *config) { c.res.bulkhead = b })
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
	return optionFunc(func(c *config) { c.res.retryBudget = b })
}

// WithSideEffects says whether the tool changes something upstream and
// whether it sends the call's idempotency key (see middleware.SideEffects).
// A tool with middleware.SideEffectsWithoutKey is not retried after an
// attempt that may have been applied (a timeout, a reset connection): the
// call ends with SideEffectUnknown and the model is told to check before
// calling again. The default is middleware.NoSideEffects.
func WithSideEffects(s middleware.SideEffects) Option {
	return optionFunc(func(c *config) { c.res.sideEffects = s })
}

// WithApproval asks a before the tool runs (the approval gate, layer 8):
// Pending pauses the agent run with *middleware.ApprovalRequired, Denied
// tells the model approval-denied. One approval covers a call and its
// retries, unless WithDestructive makes every attempt ask again. The gate
// cannot be bypassed: a fallback to a gated tool goes through its gate, and
// a nil a is a configuration error. middleware.NewGrants is an Approver to
// start with.
func WithApproval(a middleware.Approver) Option {
	return optionFunc(func(c *config) { c.res.approver, c.res.approval = a, true })
}

// WithDestructive marks the tool destructive: every attempt, retries
// included, needs an approval of its own (middleware.ApproveEachAttempt), so
// a retry after a timeout pauses for a fresh one instead of repeating an
// action nobody re-approved. It requires WithApproval.
func WithDestructive() Option {
	return optionFunc(func(c *config) { c.res.destructive = true })
}

// WithFallback routes the call to f's alternative tool when the primary
// fails for good (layer 4; see package fallback). An invalid f (a nil
// alternative, a kind that is never routed) is a configuration error.
//
// The alternative is a call of its own, after the primary's retries and
// outside its deadline, and it is never called bare:
//   - a *Tool runs through its own layers, with its own limits;
//   - a plain tools.Tool runs through toolsafe's layers with this tool's
//     attempt timeout (WithTimeout) and deadline (WithDeadline), its logger
//     and its tracing, and no retries: one attempt, its panic recovered as
//     tool-panic, and the call returns when that attempt's time is up even
//     if the alternative ignores its context (tool-timeout). With neither
//     limit set, only the caller's context bounds it.
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
		c.res.fallback = &f
	})
}

// plainFallback wraps a plain alternative as WithFallback says: toolsafe's
// layers with c's attempt timeout, deadline, logger and tracing, no retries.
// It returns alt as is when c's limits are invalid: New reports them.
func (c *config) plainFallback(alt tools.Tool) tools.Tool {
	callSpan, attemptSpan := c.callSpan, c.attemptSpan
	w, err := New(alt, WithTimeout(c.timeout), WithDeadline(c.deadline), WithLogger(c.logger),
		optionFunc(func(a *config) { a.callSpan, a.attemptSpan = callSpan, attemptSpan }))
	if err != nil {
		return alt
	}
	return w
}

// resolve fills the layers set by the options of this file. New calls it
// once every option has been applied.
func (c *config) resolve() {
	r := c.res
	if r.retryBudget != nil && c.retry != nil {
		retry := *c.retry
		retry.Budget = r.retryBudget
		c.retry = &retry
	}
	switch r.sideEffects {
	case middleware.NoSideEffects, middleware.SideEffectsWithKey, middleware.SideEffectsWithoutKey:
		c.sideEffects = middleware.GuardSideEffects(r.sideEffects)
	default:
		c.errs = append(c.errs, fmt.Errorf("side effects %d are unknown: use middleware.NoSideEffects, SideEffectsWithKey or SideEffectsWithoutKey", int(r.sideEffects)))
	}
	c.breaker, c.bulkhead = nil, nil
	if r.breaker != nil {
		c.breaker = r.breaker.Middleware()
	}
	if r.bulkhead != nil {
		c.bulkhead = r.bulkhead.Middleware()
	}
	switch {
	case r.approval && r.approver == nil:
		c.errs = append(c.errs, errors.New("the approver is nil: pass an Approver to WithApproval, such as middleware.NewGrants()"))
	case r.approval && isNil(r.approver):
		c.errs = append(c.errs, fmt.Errorf("the approver is a nil %T: pass an Approver to WithApproval, such as middleware.NewGrants()", r.approver))
	case r.approval:
		mode := middleware.ApproveCall
		if r.destructive {
			mode = middleware.ApproveEachAttempt
		}
		c.gate = middleware.Gate(r.approver, mode)
	case r.destructive:
		c.errs = append(c.errs, errors.New("the tool is destructive but has no approver: add WithApproval"))
	}
	c.fallback = nil
	if r.fallback != nil {
		c.fallback = r.fallback.GuardPlain(c.plainFallback).Middleware()
	}
}
