package toolsafe

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Tool is a langchaingo tool wrapped by toolsafe. It has the Name and
// Description of the tool it wraps. It is safe for concurrent use when the
// wrapped tool is; its configuration never changes after New or Wrap.
type Tool struct {
	name, description string
	chain             tools.Tool
	inner             tools.Tool // the tool wrapped, for ArgsSchema
	cfg               config
	err               error
}

var _ tools.Tool = (*Tool)(nil)

// New wraps t with the options' layers, in the order of DESIGN.md §2. It
// returns an error, naming every problem, when t is nil or an option is
// invalid (a negative timeout, a retry with negative MaxRetries, a jitter
// outside [0, 1], a timeout longer than the deadline).
func New(t tools.Tool, opts ...Option) (*Tool, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if isNil(t) {
		c.errs = append(c.errs, errors.New("the tool is nil: pass the tools.Tool to wrap"))
		t = nil
	}
	c.resolve()
	if err := c.validate(); err != nil {
		name := "tool"
		if t != nil {
			name = fmt.Sprintf("tool %q", t.Name())
		}
		return nil, fmt.Errorf("toolsafe: %s: %w", name, err)
	}
	attempts, err := policy.Middleware(c.retry)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: tool %q: %w", t.Name(), err)
	}
	// The layers of DESIGN.md §2, outermost first; Chain skips nil slots.
	layers := []middleware.Middleware{c.callSpan, middleware.Surface(), c.args}
	layers = append(layers, c.mws...)
	layers = append(layers,
		c.fallback,
		middleware.Deadline(c.deadline),
		attempts,
		c.sideEffects,
		c.breaker,
		c.bulkhead,
		c.gate,
		middleware.AttemptTimeout(c.timeout),
		c.attemptSpan,
		middleware.Recover(),
	)
	return &Tool{
		name:        t.Name(),
		description: t.Description(),
		chain:       middleware.Chain(layers...)(t),
		inner:       t,
		cfg:         c,
	}, nil
}

// Wrap is New for use in an expression, as when building the tool list of
// an agent. When New would return an error, Wrap returns a Tool whose every
// call returns that error (so an agent run stops with it rather than
// misbehave); check Err, or use New, to catch it early.
func Wrap(t tools.Tool, opts ...Option) *Tool {
	w, err := New(t, opts...)
	if err == nil {
		return w
	}
	w = &Tool{err: err}
	if !isNil(t) {
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
//   - a *middleware.ApprovalRequired error when the call waits for approval,
//     so the run pauses;
//   - ctx.Err() when the caller's context ended;
//   - the configuration error of a Tool made by Wrap with invalid options.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	r, err := t.run(ctx, input)
	if err != nil {
		return "", err
	}
	return r.Observation(), nil
}

// Run runs the tool and returns the structured outcome: status, attempts,
// the waits between them, the output or the failure. Result.Observation is
// what Call would give the model.
func (t *Tool) Run(ctx context.Context, input string) middleware.Result {
	r, _ := t.run(ctx, input)
	return r
}

// errZeroTool is what a Tool not made by New or Wrap answers.
var errZeroTool = errors.New("toolsafe: this Tool was not made by toolsafe.Wrap or toolsafe.New, so it has no tool inside")

func (t *Tool) run(ctx context.Context, input string) (middleware.Result, error) {
	if t == nil || (t.chain == nil && t.err == nil) {
		return middleware.Result{Failure: &middleware.Failure{Kind: middleware.KindFailed, Cause: errZeroTool,
			Detail: "the tool is misconfigured"}}, errZeroTool
	}
	call := middleware.NewCall(t.name, t.cfg.callIDs.take(ctx, t.name, input))
	call.ResumeFrom(ctx, input) // continues a call paused for approval (middleware.Resume)
	if t.err != nil {
		call.SetFailure(&middleware.Failure{Kind: middleware.KindFailed, Tool: t.name, Cause: t.err, Detail: "the tool is misconfigured"})
		return call.Result(""), t.err
	}
	call.SetLogger(t.cfg.logger)
	ctx = middleware.WithCall(ctx, call)
	out, err := t.chain.Call(ctx, input)
	r := call.Result(out)
	if err != nil && r.Failure == nil {
		r.Failure = middleware.ToFailure(ctx, call, err)
	}
	for _, f := range t.cfg.onResult {
		f(ctx, r)
	}
	return r, err
}
