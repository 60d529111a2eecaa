package toolsafe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/typednil"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Tool is a langchaingo tool wrapped by toolsafe. It has the Name and
// Description of the tool it wraps. It is safe for concurrent use when the
// wrapped tool is; its configuration never changes after New or Wrap.
type Tool struct {
	name, description string
	inner             tools.Tool // the tool wrapped
	opts              []Option   // the options it was wrapped with
	chain             tools.Tool
	cfg               config
	err               error
}

var (
	_ tools.Tool      = (*Tool)(nil)
	_ fallback.Runner = (*Tool)(nil)
)

// New wraps t with the options' layers. It returns an error naming every
// problem, and matching ErrConfig (errors.Is), when t is nil, t is a *Tool
// already (ErrWrapped), an option is invalid (a negative timeout, a retry
// with negative MaxRetries, a jitter outside [0, 1], a timeout longer than
// the deadline, WithDestructive without an approver, ...), or a guard is
// set twice: a second WithApproval, WithSideEffects, WithCallLimits,
// WithTimeout, ... (the list is on Option) is refused, naming both options
// and how to fix it, never "the later wins".
//
// The layers, outermost first, whatever the order of the options (Layers
// returns their names, and a test holds this list to it):
//
//  1. "call span" (WithTracing);
//  2. "surface", which turns what happened into the model's message;
//  3. "args schema", argument validation: input that is not UTF-8 text
//     (RFC 8259 §8.1) on every tool, then the schema of WithArgs;
//  4. "run ledger", which in a run scoped with run.With records each call
//     and answers a resumed run's completed calls of a tool with side
//     effects or a gate without calling it again;
//  5. "loop guard" (WithCallLimits), which in such a run refuses calls past
//     the run's limits and repeats of calls that failed for good;
//  6. "with", the middlewares given to With;
//  7. "fallback" (WithFallback);
//  8. "deadline", the total deadline (WithDeadline);
//  9. "retry" (WithRetry, with its policy.Retry.Budget);
//  10. "side effects", the side-effect guard (WithSideEffects);
//  11. "approval", the gate (WithApproval), asked before any permit is taken;
//  12. "policies", the failsafe-go policies given to WithPolicies;
//  13. "breaker" (WithCircuitBreaker);
//  14. "bulkhead" (WithBulkhead);
//  15. "timeout", the hard attempt timeout (WithTimeout), which starts and
//     ends the attempt span (WithTracing);
//  16. "recover", panic recovery;
//  17. the tool.
//
// A tool that describes its own input (argschema.Schemer, as an MCP
// server's tools do) has it checked as WithArgs would, unless an
// option gives a schema. A tool that declares hints
// (middleware.HintedTool, as an MCP server's tools do) gets the side
// effects they give (middleware.Hints.SideEffects: without a key unless
// its server is trusted) unless WithSideEffects, or WithApproval with
// approval.ApproveEachAttempt, is given.
func New(t tools.Tool, opts ...Option) (*Tool, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if typednil.Is(t) {
		return nil, &configError{errors.Join(append([]error{errors.New("toolsafe: the tool to wrap is nil: pass a tools.Tool")}, c.errs...)...)}
	}
	if _, wrapped := t.(*Tool); wrapped {
		c.errs = append([]error{ErrWrapped}, c.errs...)
	}
	if s, ok := t.(argschema.Schemer); ok && c.args == nil && !c.argsSet && !typednil.Is(s) {
		// The tool describes its own input (an MCP server's tool does):
		// check it before any attempt, as WithArgs would.
		if raw := s.ArgsSchema(); len(raw) > 0 {
			compiled, err := argschema.Compile(raw)
			if err != nil {
				c.errs = append(c.errs, fmt.Errorf("the tool's own argument schema: %w (give a valid one with WithArgs)", err))
			}
			c.args = compiled
		}
	}
	if h, ok := t.(middleware.HintedTool); ok && !c.sideSet && !c.destructive && !typednil.Is(h) {
		// The tool declares hints (an MCP server's annotations): its side
		// effects come from them, as WithSideEffects would set them.
		c.sideEffects, _ = h.Hints().SideEffects()
	}
	if err := c.validate(); err != nil {
		return nil, &configError{fmt.Errorf("toolsafe: tool %q: %w", t.Name(), err)}
	}
	mws, err := c.build()
	if err != nil {
		return nil, &configError{fmt.Errorf("toolsafe: tool %q: %w", t.Name(), err)}
	}
	return &Tool{
		name:        t.Name(),
		description: t.Description(),
		inner:       t,
		opts:        opts,
		chain:       middleware.Chain(mws...)(t),
		cfg:         c,
	}, nil
}

// ErrWrapped is what New returns (joined with the tool's name and any other
// problem; test it with errors.Is), and what every call of Wrap's tool
// answers, for a tool that is a *Tool already. Wrapping twice asks an
// approval gate twice per call, and an outer retry takes the inner
// layers' failure messages for answers. Wrap the tool inside once, with
// every option; a *Tool is given to WithFallback as it is.
var ErrWrapped = errors.New("the tool is a *toolsafe.Tool already: wrap the tool inside it once, with all the options, instead of wrapping it again")

// reachedKey carries, into the policies of WithPolicies, how many times an
// attempt through them has reached the layers inside.
type reachedKey struct{}

var (
	errRanAgain = errors.New("toolsafe: a policy of WithPolicies ran the attempt again; " +
		"a tool with side effects or an approval gate runs once per attempt: give it WithRetry instead")
	errAnsweredInstead = errors.New("toolsafe: a policy of WithPolicies answered in place of the tool (a cache or a fallback); " +
		"a tool with side effects or an approval gate must be called for its answer: give it WithFallback instead")
)

// oncePerAttempt holds the policies of WithPolicies, on a tool with side
// effects or a gate, to what New checks of their types: each attempt
// through them reaches the layers inside (the breaker, the tool) at most
// once, and does not succeed without reaching them. A policy of the
// caller's own type that retries, hedges or answers from a cache fails the
// attempt instead (tool-failed, not retried), before the tool runs twice
// or a second call gets the first one's answer.
func oncePerAttempt(policies middleware.Middleware) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		inner := middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			if n, _ := ctx.Value(reachedKey{}).(*atomic.Int32); n != nil && n.Add(1) > 1 {
				return "", middleware.Permanent(errRanAgain)
			}
			return next.Call(ctx, input)
		})
		through := policies(inner)
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			var reached atomic.Int32
			out, err := through.Call(context.WithValue(ctx, reachedKey{}, &reached), input)
			if err == nil && reached.Load() == 0 {
				return "", middleware.Permanent(errAnsweredInstead)
			}
			return out, err
		})
	}
}

// replays reports whether a resumed run answers this tool's calls from the
// run ledger: a tool with side effects or an approval gate. A tool that only
// reads is always called again.
func (c *config) replays() bool {
	return c.approval || c.sideEffectsOf() != middleware.NoSideEffects
}

// retryLayer is the retry of WithRetry, with its budget (policy.Retry.Budget,
// or the deprecated WithRetryBudget's); nil without WithRetry.
func (c *config) retryLayer() (middleware.Middleware, error) {
	if c.retry == nil {
		return nil, nil
	}
	r := *c.retry
	if c.budget != nil {
		r.Budget = c.budget
	}
	return policy.Middleware(&r)
}

// alternative is how the fallback layer runs f's alternative: a *Tool
// through its own layers, behind this tool's approver when this tool is
// gated and it is not; a plain tool once, through toolsafe's layers with
// this tool's attempt timeout, deadline, approval gate, logger and
// tracing. No route reaches an alternative of a gated tool without a gate:
// when the gate cannot be put in front of it, the alternative fails
// (tool-failed) instead of running.
func (c *config) alternative(f fallback.Fallback) fallback.Runner {
	alt := f.Tool()
	w, isTool := alt.(*Tool)
	if isTool && (!c.approval || w.cfg.approval) {
		return w
	}
	// A plain alternative has this tool's side effects, as far as anyone
	// knows; a *Tool's are as it declared them.
	inner, opts := alt, []Option{WithTimeout(c.timeout), WithDeadline(c.deadline), WithLogger(c.logger), WithTracing(c.hook), WithSideEffects(c.sideEffectsOf())}
	if isTool {
		inner, opts = w.inner, slices.Clone(w.opts)
	}
	g, err := New(inner, append(opts, c.gateOptions()...)...)
	if err != nil {
		return fallback.RunnerFunc(func(context.Context, string) middleware.Result {
			return middleware.Result{Tool: alt.Name(), Failure: &middleware.Failure{Kind: middleware.KindFailed, Tool: alt.Name(), Cause: err}}
		})
	}
	return g
}

// gateOptions are the options that put this tool's approval gate in front
// of another tool, asked as often as this tool asks it (every attempt of a
// destructive tool); none when it has no gate. They leave the other tool's
// side effects as it declared them.
func (c *config) gateOptions() []Option {
	if !c.approval {
		return nil
	}
	each := c.gateMode() == approval.ApproveEachAttempt
	return []Option{WithApproval(c.approver), optionFunc(func(o *config) { o.gateEachAttempt = o.gateEachAttempt || each })}
}

// Wrap is New for use in an expression, as when building the tool list of
// an agent. When New would return an error (it matches ErrConfig), Wrap
// returns a Tool whose every call returns that error (so an agent run stops
// with it rather than misbehave), and whose Err returns it; check Err, or
// use New, to catch it early.
func Wrap(t tools.Tool, opts ...Option) *Tool {
	w, err := New(t, opts...)
	if err == nil {
		return w
	}
	w = &Tool{err: err}
	if !typednil.Is(t) {
		w.name, w.description = t.Name(), t.Description()
	}
	return w
}

// Err returns the configuration error of a Tool made by Wrap, or nil.
func (t *Tool) Err() error { return t.err }

// Name returns the wrapped tool's name.
func (t *Tool) Name() string {
	if t == nil {
		return ""
	}
	return t.name
}

// Description returns the wrapped tool's description.
func (t *Tool) Description() string {
	if t == nil {
		return ""
	}
	return t.description
}

// Call runs the tool as langchaingo's executor expects. It returns:
//   - the tool's output and a nil error on success;
//   - for a failure meant for the model, its message as the output and a nil
//     error, because langchaingo's executor aborts the whole run on a tool
//     error and the model would never see it;
//   - a *approval.Required error when the call waits for approval,
//     so the run pauses;
//   - ctx.Err() when the caller's context ended;
//   - the configuration error of a Tool made by Wrap with invalid options.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	if t == nil || t.chain == nil || len(t.cfg.onResult) > 0 {
		return t.callWithResult(ctx, input)
	}
	// No Result is read: build none (BenchmarkSuccess/toolsafe in package
	// bench).
	_, c, out, err := t.invoke(ctx, input)
	if err != nil {
		return "", err
	}
	return c.Observation(out), nil
}

// invoke is the one path of every call of a Tool that has its chain: it
// begins the call's record and runs the chain, and returns the record,
// the context that carries it and what the chain answered.
func (t *Tool) invoke(ctx context.Context, input string) (context.Context, *call.Call, string, error) {
	ctx, c := call.Begin(ctx, t.name, t.cfg.callID(ctx, t.name, input), input, t.cfg.logger)
	if t.cfg.announceGate != nil {
		// A layer of With, outside the gate, knows of it from the start.
		t.cfg.announceGate(ctx)
	}
	out, err := t.chain.Call(ctx, input)
	return ctx, c, out, err
}

// callWithResult is Call for a Tool whose Result someone reads.
func (t *Tool) callWithResult(ctx context.Context, input string) (string, error) {
	r, err := t.run(ctx, input)
	if err != nil {
		return "", err
	}
	return r.Observation(), nil
}

// Run runs the tool and returns the structured outcome: status, attempts,
// the delays between them, the output or the failure. Result.Observation is
// what Call would give the model.
func (t *Tool) Run(ctx context.Context, input string) middleware.Result {
	r, _ := t.run(ctx, input)
	return r
}

// errZeroTool is what a Tool not made by New or Wrap answers.
var errZeroTool = errors.New("toolsafe: this Tool was not made by toolsafe.Wrap or toolsafe.New, so it has no tool inside")

func (t *Tool) run(ctx context.Context, input string) (middleware.Result, error) {
	if t == nil || (t.chain == nil && t.err == nil) {
		return middleware.Result{Failure: &middleware.Failure{Kind: middleware.KindFailed, Cause: errZeroTool}}, errZeroTool
	}
	if t.err != nil {
		return middleware.Result{Tool: t.name, Failure: &middleware.Failure{Kind: middleware.KindFailed, Tool: t.name, Cause: t.err}}, t.err
	}
	ctx, c, out, err := t.invoke(ctx, input)
	r := c.Result(ctx, out, err)
	for _, f := range t.cfg.onResult {
		f(ctx, r)
	}
	return r, err
}
