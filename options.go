package toolsafe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/typednil"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// Option configures a Tool. Options are applied in order, in one pass.
// Each setting has one option, and a guard's companions are given with it:
// the retry budget on WithRetry's policy.Retry.Budget, the cap on abandoned
// attempts with WithTimeout (policy.MaxAbandoned), how often the approver
// is asked with WithApproval (approval.ApproveEachAttempt for a destructive
// tool), the schema with WithArgs, call IDs with WithCallIDs. The options
// marked Deprecated, WithRetryBudget, WithMaxAbandoned, WithDestructive,
// WithArgsSchema and WithCallIDFunc, still work and set the same place,
// under the same rule.
// A guard is set once: each of WithRetry, WithTimeout, WithCallLimits,
// WithDeadline, WithArgs, WithCircuitBreaker, WithBulkhead,
// WithSideEffects, WithApproval and WithFallback may be given once, and a
// companion once, whichever option gave it, and New refuses a second
// (ErrConfig), naming both, whatever its value: a later option never
// silently replaces, or weakens, what an earlier one set, be it in your
// code, a helper's or a policies file's. With, WithPolicies and
// WithOnResult add up. WithLogger, WithTracing and WithCallIDs say how
// calls are logged, traced and named, and guard nothing: a later one
// replaces an earlier one. The zero value of every setting is the safe
// default: one attempt, no time limit of its own, no side effects, no
// gate.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config holds what the options set; New builds the layers from it.
type config struct {
	hook    *otelhook.Hook
	args    *argschema.Schema
	argsSet bool // WithArgs (or WithArgsSchema) was given
	mws     []middleware.Middleware
	// announceGate records on a call that its attempts pass the approval
	// gate, as the call begins (see approval.NewGate); nil without one.
	announceGate func(ctx context.Context)
	fallback     *fallback.Fallback
	deadline     time.Duration
	retry        *policy.Retry
	budget       budget.Budget
	sideEffects  middleware.SideEffects
	sideSet      bool // WithSideEffects was given
	approval     bool // WithApproval was given
	approver     approval.Approver
	destructive  bool
	// gateEachAttempt asks the approver on every attempt, as for a
	// destructive tool: set on the alternative of a destructive tool.
	gateEachAttempt bool
	policies        []failsafe.Policy[string]
	breaker         *policy.CircuitBreaker
	bulkhead        *policy.Bulkhead
	timeout         time.Duration
	maxAbandoned    int
	limits          run.Limits
	logger          *slog.Logger
	callIDs         CallIDSource
	onResult        []func(context.Context, middleware.Result)
	// setBy names, for each guard, the option that set it (see set).
	setBy [guardCount]string
	errs  []error
}

// validate reports every problem of c, joined.
func (c *config) validate() error {
	errs := c.errs
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if c.retry != nil {
		add(c.retry.Validate())
	}
	if c.breaker != nil {
		add(c.breaker.Validate())
	}
	if c.bulkhead != nil {
		add(c.bulkhead.Validate())
	}
	add(policy.ValidateTimeouts(c.timeout, c.deadline))
	add(c.limits.Validate())
	switch c.sideEffects {
	case middleware.NoSideEffects, middleware.SideEffectsWithKey, middleware.SideEffectsWithoutKey:
	default:
		add(fmt.Errorf("side effects %d are unknown: use middleware.NoSideEffects, SideEffectsWithKey or SideEffectsWithoutKey", int(c.sideEffects)))
	}
	switch {
	case c.approval && c.approver == nil:
		add(errors.New("the approver is nil: pass an Approver to WithApproval, such as approval.NewGrants()"))
	case c.approval && typednil.Is(c.approver):
		add(fmt.Errorf("the approver is a nil %T: pass an Approver to WithApproval, such as approval.NewGrants()", c.approver))
	case c.destructive && !c.approval:
		add(errors.New("the tool is destructive (WithDestructive) but has no approver: add WithApproval(a, approval.ApproveEachAttempt) in place of WithDestructive"))
	}
	if c.destructive && c.sideSet && c.sideEffects == middleware.NoSideEffects {
		add(errors.New("the tool is destructive, so it has side effects: use WithSideEffects(middleware.SideEffectsWithKey) or SideEffectsWithoutKey, not NoSideEffects"))
	}
	for i, p := range c.policies {
		if typednil.Is(p) {
			add(fmt.Errorf("policy %d of WithPolicies is nil", i+1))
			continue
		}
		if what := reruns(p); what != "" && (c.approval || c.sideEffectsOf() != middleware.NoSideEffects) {
			add(fmt.Errorf("policy %d of WithPolicies is %s: it runs the tool more than once, or in place of an attempt, behind the approval gate and the side-effect guard, "+
				"which a tool with side effects or an approval gate may not have: use WithRetry for its retries and WithFallback for an alternative, which know side effects and gates", i+1, what))
		}
	}
	return errors.Join(errs...)
}

// reruns names a failsafe-go policy that runs an attempt again, or answers
// for it: a retry, a hedge, a fallback, a cache, told by the package of its type
// (failsafe-go's interfaces for them are failsafe.Policy itself). Any other
// returns "". A policy of the caller's own type that does the same is
// caught when it runs (see oncePerAttempt).
func reruns(p failsafe.Policy[string]) string {
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() {
	case "github.com/failsafe-go/failsafe-go/retrypolicy":
		return "a failsafe-go retry policy"
	case "github.com/failsafe-go/failsafe-go/hedgepolicy":
		return "a failsafe-go hedge policy"
	case "github.com/failsafe-go/failsafe-go/fallback":
		return "a failsafe-go fallback"
	case "github.com/failsafe-go/failsafe-go/cachepolicy":
		return "a failsafe-go cache policy"
	}
	return ""
}

// sideEffectsOf is the tool's side effects: a destructive tool
// (approval.ApproveEachAttempt) without WithSideEffects has side effects
// without an idempotency key.
func (c *config) sideEffectsOf() middleware.SideEffects {
	if c.destructive && !c.sideSet {
		return middleware.SideEffectsWithoutKey
	}
	return c.sideEffects
}

func (c *config) gateMode() approval.GateMode {
	if c.destructive || c.gateEachAttempt {
		return approval.ApproveEachAttempt
	}
	return approval.ApproveCall
}

// WithRetry retries transient failures as r says (see policy.Retry). Without
// it a call makes one attempt. MaxRetries 3 means up to 4 attempts; with the
// zero Backoff, the delays are policy.DefaultBackoff's. r.Budget, when not
// nil, is the retry budget the tools of a dependency share: the one place
// to give it.
// Given twice, New refuses it (ErrConfig): a guard is set once; so is a
// Budget beside the deprecated WithRetryBudget.
func WithRetry(r policy.Retry) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardRetry, "WithRetry") {
			return
		}
		c.retry = &r
		if r.Budget != nil {
			c.setBudget("WithRetry's policy.Retry.Budget", r.Budget)
		}
	})
}

// setBudget records b as the retry budget of WithRetry's policy, set by the
// option called name, once (see retryLayer).
func (c *config) setBudget(name string, b budget.Budget) {
	if c.set(guardBudget, name) {
		c.budget = b
	}
}

// WithTimeout limits each attempt to d. When d passes the caller gets
// control back, even if the tool ignores its context (the abandoned attempt
// finishes in the background and is counted in Result.Abandoned), and the
// attempt fails with tool-timeout, which is retried. Zero means no limit per
// attempt. A negative d is an error.
//
// abandoned, when given, is the cap on this tool's abandoned attempts still
// running (see policy.MaxAbandoned; without it the cap is 64):
// WithTimeout(2*time.Second, policy.MaxAbandoned(16)). It is the one place
// to set the cap; more than one is an error.
// Given twice, New refuses it (ErrConfig): a guard is set once; so is a
// cap beside the deprecated WithMaxAbandoned.
func WithTimeout(d time.Duration, abandoned ...policy.MaxAbandoned) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardTimeout, "WithTimeout") {
			return
		}
		switch {
		case len(abandoned) > 1:
			c.errs = append(c.errs, fmt.Errorf("WithTimeout takes one policy.MaxAbandoned, not %d: give the cap once", len(abandoned)))
		case len(abandoned) == 1:
			c.setMaxAbandoned("WithTimeout's policy.MaxAbandoned", abandoned[0])
		}
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("attempt timeout %v is negative: use 0 for no limit, or a duration such as 2s", d))
			return
		}
		c.timeout = d
	})
}

// setMaxAbandoned records m as the cap on abandoned attempts, set by the
// option called name, once.
func (c *config) setMaxAbandoned(name string, m policy.MaxAbandoned) {
	if !c.set(guardMaxAbandoned, name) {
		return
	}
	if err := m.Validate(); err != nil {
		c.errs = append(c.errs, err)
		return
	}
	c.maxAbandoned = int(m)
}

// WithMaxAbandoned caps the attempts of this tool that the attempt timeout
// abandoned and that are still running (see policy.MaxAbandoned). Zero
// means the default of 64. A negative n is an error.
// Given twice, or beside WithTimeout's policy.MaxAbandoned, New refuses it
// (ErrConfig).
//
// Deprecated: give the cap with the timeout it belongs to:
// WithTimeout(d, policy.MaxAbandoned(n)).
func WithMaxAbandoned(n int) Option {
	return optionFunc(func(c *config) { c.setMaxAbandoned("WithMaxAbandoned", policy.MaxAbandoned(n)) })
}

// WithCallLimits caps the calls of this tool in one agent run scoped with
// run.With (see run.Limits and LoopGuard): past a
// limit, a call is refused at once with call-limit, no attempt made, and
// the model is told what was already tried and what to do instead. Even
// without limits, an identical call after one that failed for good (and
// told the model not to repeat it) is refused in a scoped run. Outside a
// scoped run no limit applies. Negative limits are an error.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithCallLimits(l run.Limits) Option {
	return optionFunc(func(c *config) {
		if c.set(guardCallLimits, "WithCallLimits") {
			c.limits = l
		}
	})
}

// WithDeadline limits the whole call, attempts and delays between them
// included, to d. No retry is scheduled that could not start before it. When
// it passes the call ends with tool-timeout. Zero means no deadline of its
// own (the caller's context may still have one). A negative d is an error.
// Given twice, New refuses it (ErrConfig): a guard is set once.
func WithDeadline(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardDeadline, "WithDeadline") {
			return
		}
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("deadline %v is negative: use 0 for none, or a duration such as 30s", d))
			return
		}
		c.deadline = d
	})
}

// With adds middlewares around each logical call, inside argument
// validation and outside the fallback, the deadline and the retries: they
// see the input once per call and the call's final error (before surface
// turns it into the model's message). The first is outermost. Nil
// middlewares are skipped. They run on the caller's goroutine, outside the
// deadline and the attempt timeout, so a middleware must honour ctx: one
// that blocks past ctx's end holds the caller, as an http.Handler
// middleware would.
func With(mws ...middleware.Middleware) Option {
	return optionFunc(func(c *config) { c.mws = append(c.mws, mws...) })
}

// WithOnResult calls f with the Result of every call, after the call and
// before Call or Run returns, on the caller's goroutine: a place to log or
// print each call's status, attempts and delays. f must not block for long.
// Several WithOnResult add up; nil is ignored.
func WithOnResult(f func(ctx context.Context, r middleware.Result)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.onResult = append(c.onResult, f)
		}
	})
}

// WithLogger sets the logger of the tool's calls: each retry and each
// failure that ends a call at DEBUG, with the raw error text (and an HTTP
// error's body, capped); panics at ERROR with their type and stack (the
// panic's value at DEBUG). Nil, the default, means slog.Default() at the
// time of the call.
// A later WithLogger replaces an earlier one.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}
