package fallback

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/failsafe-go/failsafe-go"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Runner runs the alternative tool of a call as a call of its own and
// reports its structured outcome. *toolsafe.Tool is a Runner: its Run goes
// through its own layers. toolsafe.WithFallback gives the fallback layer
// the Runner for the declared alternative.
type Runner interface {
	Run(ctx context.Context, input string) middleware.Result
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, input string) middleware.Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, input string) middleware.Result { return f(ctx, input) }

// Fallback is a declared alternative for a tool: give it to
// toolsafe.WithFallback. It is a value that never changes once made by To;
// it is safe for concurrent use when its alternative and input adapter are.
type Fallback struct {
	alt   tools.Tool
	adapt func(ctx context.Context, input string) (string, error)
	kinds map[middleware.Kind]bool
	err   error
}

// DefaultKinds are the kinds of failure routed to the alternative unless On
// says otherwise: tool-failed, tool-timeout, circuit-open and tool-error.
// It returns a fresh slice.
func DefaultKinds() []middleware.Kind {
	return []middleware.Kind{middleware.KindFailed, middleware.KindTimeout, middleware.KindCircuitOpen, middleware.KindToolError}
}

// NeverRouted reports whether no Fallback routes a failure of kind k,
// whatever On says: approval-required, approval-denied, args-invalid,
// canceled and call-limit. A pause or a denial must not be routed around, a
// bad argument is the model's to fix, a caller that gave up wants no more
// work, and a call the loop guard refused must not be made elsewhere.
func NeverRouted(k middleware.Kind) bool {
	switch k {
	case middleware.KindApprovalRequired, middleware.KindApprovalDenied, middleware.KindArgsInvalid, middleware.KindCanceled,
		middleware.KindCallLimit:
		return true
	}
	return false
}

// Option configures a Fallback.
type Option interface{ apply(*Fallback) }

type optionFunc func(*Fallback)

func (o optionFunc) apply(f *Fallback) { o(f) }

// WithInput adapts the input of the failed call to the alternative's
// signature, e.g. {"id":"T-7"} to {"query":"T-7"}. When adapt returns an
// error the alternative is not called and the primary's failure stands (the
// error is logged at DEBUG). Nil means the input is passed as is. adapt
// runs on the caller's goroutine, before the alternative's own time limits
// begin: it must return promptly, and as soon as ctx ends.
func WithInput(adapt func(ctx context.Context, input string) (string, error)) Option {
	return optionFunc(func(f *Fallback) { f.adapt = adapt })
}

// On names the kinds of failure routed to the alternative, replacing
// DefaultKinds. approval-required, approval-denied, args-invalid, canceled
// and call-limit are never routed: naming one makes the Fallback invalid (see
// Err). On with no kinds routes nothing.
func On(kinds ...middleware.Kind) Option {
	return optionFunc(func(f *Fallback) {
		f.kinds = make(map[middleware.Kind]bool, len(kinds))
		for _, k := range kinds {
			if NeverRouted(k) {
				f.err = errors.Join(f.err, fmt.Errorf("fallback: %s is never routed to a fallback: a pause waits for a person, a refusal stands, a bad argument is the model's to fix, a cancelled caller wants nothing more", k))
				continue
			}
			f.kinds[k] = true
		}
	})
}

// To declares alt as the alternative of a tool. Pass a *toolsafe.Tool, so the
// alternative has its own retries, validation, limits and approval gate. A
// plain tools.Tool is never called bare: given to toolsafe.WithFallback, it
// runs through toolsafe's own layers with the primary's attempt timeout,
// deadline and approval gate, no retries, its panics recovered; used
// through Middleware with no Runner, its panics are recovered, the call
// returns when ctx ends, even if alt ignores its context, and it runs
// behind every approval gate of the primary (asked about alt's name and
// input), so a fallback placed by hand around a gated tool is no way
// around its gate. A nil alt makes
// the Fallback invalid (see Err).
func To(alt tools.Tool, opts ...Option) Fallback {
	f := Fallback{alt: alt, kinds: make(map[middleware.Kind]bool)}
	for _, k := range DefaultKinds() {
		f.kinds[k] = true
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&f)
		}
	}
	if alt == nil {
		f.err = errors.Join(f.err, errors.New("fallback: the alternative tool is nil"))
	}
	return f
}

// Err reports a Fallback that cannot work: a nil alternative, or On naming a
// kind that is never routed. toolsafe.New returns it.
func (f Fallback) Err() error { return f.err }

// Tool is the alternative tool, as given to To; nil when there is none.
func (f Fallback) Tool() tools.Tool { return f.alt }

// Alternative is the alternative tool's name, or "" when there is none.
func (f Fallback) Alternative() string {
	if f.alt == nil {
		return ""
	}
	return f.alt.Name()
}

// Routes reports whether a failure of kind k goes to the alternative.
func (f Fallback) Routes(k middleware.Kind) bool { return f.kinds[k] && !NeverRouted(k) }

// routes reports whether the call's failure p goes to the alternative: its
// kind is routed, and it is no outcome that must stand — an action that may
// have been applied (a second action elsewhere would double it), or a time
// that ran out while the approval gate was still waiting (a fallback is no
// way around an approval).
func (f Fallback) routes(p *middleware.Failure) bool {
	return f.Routes(p.Kind) && p.SideEffect != middleware.SideEffectUnknown &&
		p.WaitingFor != call.WaitingForApproval
}

// routed is a primary failure that the fallback policy handles.
type routed struct {
	err     error
	primary *middleware.Failure
	input   string
	answer  *string // the alternative's answer, once it answered
}

func (r *routed) Error() string { return r.err.Error() }
func (r *routed) Unwrap() error { return r.err }

// Middleware returns the fallback layer, on failsafe-go's fallback policy:
// the primary's final failure is routed to the alternative, called by run
// (nil: its own Run when it is a Runner such as a *toolsafe.Tool, else once
// as a plain tool; either way behind every approval gate the primary's call
// passes), when its kind is routed (Routes) and the outcome need not stand:
// never a pause, a cancellation, an action that may have been applied, or a
// time that ran out while waiting for approval. An alternative already on
// the call's fallback path is not called, so a cycle ends (the message says
// so). An invalid Fallback returns the tool as is.
func (f Fallback) Middleware(run Runner) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		if f.alt == nil || f.err != nil {
			return next
		}
		given := run
		if run == nil {
			run = runnerOf(f.alt)
		}
		altName := f.alt.Name()
		policy := fsfallback.NewBuilderWithFunc(func(e failsafe.Execution[string]) (string, error) {
			var r *routed
			errors.As(e.LastError(), &r)
			run := run
			if given == nil {
				// Placed by hand: the alternative passes every approval
				// gate the primary's call went through.
				if gates := approval.GatesOf(e.Context()); len(gates) > 0 {
					run = gatedRunner(f.alt, gates)
				}
			}
			return f.fallBack(e.Context(), next.Name(), altName, run, r)
		}).HandleIf(func(_ string, err error) bool {
			var r *routed
			return errors.As(err, &r)
		}).Build()
		exec := failsafe.With[string](policy)
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			// failsafe-go drops an answer given as ctx ends and returns
			// ctx.Err() instead; the answer stands (its action was done).
			var answer *string
			var sent *routed
			out, err := exec.WithContext(ctx).Get(func() (string, error) {
				out, err := next.Call(ctx, input)
				if err == nil {
					answer = &out
				}
				if err == nil || ctx.Err() != nil {
					return out, err
				}
				if p := call.FailureOf(ctx, err); f.routes(p) {
					sent = &routed{err: err, primary: p, input: input}
					return "", sent
				}
				return out, err
			})
			if err != nil && answer == nil && sent != nil {
				answer = sent.answer
			}
			if err != nil && answer != nil {
				return *answer, nil
			}
			var r *routed
			if errors.As(err, &r) {
				err = r.err // not routed after all: the caller left
			}
			return out, err
		})
	}
}

// fallBack runs the alternative for the routed primary failure r, with
// input, and returns its answer, or the error that ends the call.
func (f Fallback) fallBack(ctx context.Context, tool, altName string, run Runner, r *routed) (string, error) {
	c := call.From(ctx)
	path := pathFrom(ctx)
	if altName == tool || slices.Contains(path, altName) {
		c.Logger().WarnContext(ctx, "toolsafe: fallback not taken: the alternative is already on this call's fallback path (a fallback cycle)",
			"tool", tool, "fallback", altName, "path", strings.Join(path, " → "))
		call.Record(ctx, call.FallbackSkipped{To: altName})
		return "", r.err
	}
	input := r.input
	if f.adapt != nil {
		in, err := f.adapt(ctx, input)
		if err != nil {
			c.Logger().DebugContext(ctx, "toolsafe: fallback input could not be adapted",
				"tool", tool, "fallback", altName, "error", err.Error())
			return "", r.err
		}
		input = in
	}
	call.Record(ctx, call.FallbackRouted{To: altName, Primary: r.primary})
	res := run.Run(withPath(ctx, path, tool, altName), input)
	af := res.Failure
	switch {
	case af == nil:
		r.answer = &res.Output
		return res.Output, nil
	case af.Kind == middleware.KindApprovalRequired:
		var ar *approval.Required
		if errors.As(af, &ar) {
			return "", ar
		}
		return "", &approval.Required{Tool: altName, Input: input}
	case af.Kind == middleware.KindCanceled && ctx.Err() != nil:
		return "", ctx.Err()
	}
	call.Record(ctx, call.FallbackFailed{Failure: af})
	return "", r.err
}

// runnerOf is how an alternative is run when no Runner is given: its own
// Run when it has one, else as a plain tool, never bare (its panics are
// recovered, and the call returns when ctx ends even if it ignores ctx),
// as a call of its own with its own record and idempotency key.
func runnerOf(alt tools.Tool) Runner {
	if r, ok := alt.(Runner); ok {
		return r
	}
	return stackRunner(alt, alt, nil)
}

// gatedRunner runs alt as runnerOf does, behind gates (see
// approval.GatesOf): asked about alt's name and input before it runs.
func gatedRunner(alt tools.Tool, gates []middleware.Middleware) Runner {
	inner := alt
	if r, ok := alt.(Runner); ok {
		inner = middleware.Func(alt.Name(), alt.Description(), func(ctx context.Context, input string) (string, error) {
			res := r.Run(ctx, input)
			if res.Failure == nil {
				return res.Output, nil
			}
			var ar *approval.Required
			if errors.As(res.Failure, &ar) {
				return "", ar
			}
			if res.Failure.Kind == middleware.KindCanceled && ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", res.Failure
		})
	}
	return stackRunner(alt, inner, gates)
}

// stackRunner runs inner, the alternative alt or its Run, as a call of its
// own through the layers of toolsafe's table (see toolsafe.Layers) that an
// alternative placed by hand gets: the surface, gates as the approval
// layer, and, for a plain tool, the attempt timeout (no limit of its own:
// the call returns when ctx ends) and panic recovery. With gates, the
// alternative's own fallbacks pass them too.
func stackRunner(alt, inner tools.Tool, gates []middleware.Middleware) Runner {
	build := map[string]layer.Builder{"surface": only(layer.Surface())}
	if gates != nil {
		build["approval"] = func() ([]middleware.Middleware, error) { return gates, nil }
	}
	if _, ok := alt.(Runner); !ok {
		build["timeout"], build["recover"] = only(layer.AttemptTimeout(0)), only(layer.Recover())
	}
	mws, err := layer.Stack(build)
	chain := middleware.Chain(mws...)(inner)
	return RunnerFunc(func(ctx context.Context, input string) middleware.Result {
		if err != nil {
			return middleware.Result{Tool: alt.Name(), Failure: &middleware.Failure{Kind: middleware.KindFailed, Tool: alt.Name(), Cause: err}}
		}
		if gates != nil {
			ctx = approval.InheritGates(ctx)
		}
		ctx, c := call.Begin(ctx, alt.Name(), "", input, call.From(ctx).Logger())
		out, err := chain.Call(ctx, input)
		return c.Result(ctx, out, err)
	})
}

// only builds one layer, mw.
func only(mw middleware.Middleware) layer.Builder {
	return func() ([]middleware.Middleware, error) { return []middleware.Middleware{mw}, nil }
}

// pathKey carries the fallback path in a context: a []string of tool names.
type pathKey struct{}

// pathFrom returns the fallback path in ctx, nil if none. It must not be
// appended to in place.
func pathFrom(ctx context.Context) []string {
	p, _ := ctx.Value(pathKey{}).([]string)
	return p
}

// withPath returns ctx carrying path followed by names. path is not changed.
func withPath(ctx context.Context, path []string, names ...string) context.Context {
	p := make([]string, 0, len(path)+len(names))
	p = append(append(p, path...), names...)
	return context.WithValue(ctx, pathKey{}, p)
}
