package fallback

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

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

// never are the kinds no Fallback routes, whatever On says.
var never = map[middleware.Kind]bool{
	middleware.KindApprovalRequired: true,
	middleware.KindApprovalDenied:   true,
	middleware.KindArgsInvalid:      true,
	middleware.KindCanceled:         true,
}

// NeverRouted reports whether no Fallback routes a failure of kind k,
// whatever On says: approval-required, approval-denied, args-invalid and
// canceled. A pause or a denial must not be routed around, a bad argument
// is the model's to fix, and a caller that gave up wants no more work.
func NeverRouted(k middleware.Kind) bool { return never[k] }

// Option configures a Fallback.
type Option func(*Fallback)

// WithInput adapts the input of the failed call to the alternative's
// signature, e.g. {"id":"T-7"} to {"query":"T-7"}. When adapt returns an
// error the alternative is not called and the primary's failure stands (the
// error is logged at DEBUG). Nil means the input is passed as is.
func WithInput(adapt func(ctx context.Context, input string) (string, error)) Option {
	return func(f *Fallback) { f.adapt = adapt }
}

// On names the kinds of failure routed to the alternative, replacing
// DefaultKinds. approval-required, approval-denied, args-invalid and
// canceled are never routed: naming one makes the Fallback invalid (see
// Err). On with no kinds routes nothing.
func On(kinds ...middleware.Kind) Option {
	return func(f *Fallback) {
		f.kinds = make(map[middleware.Kind]bool, len(kinds))
		for _, k := range kinds {
			if never[k] {
				f.err = errors.Join(f.err, fmt.Errorf("fallback: %s is never routed to a fallback: a pause waits for a person, a refusal stands, a bad argument is the model's to fix, a cancelled caller wants nothing more", k))
				continue
			}
			f.kinds[k] = true
		}
	}
}

// To declares alt as the alternative of a tool. Pass a *toolsafe.Tool, so the
// alternative has its own retries, validation, limits and approval gate. A
// plain tools.Tool is made safe to call, never called bare: given to
// toolsafe.WithFallback, it runs through toolsafe's own layers with the
// primary's attempt timeout (WithTimeout) and deadline (WithDeadline), no
// retries, its panics recovered (see GuardPlain); used through Middleware
// alone, its panics are recovered and the call returns when ctx ends, even
// if alt ignores its context. A nil alt makes the Fallback invalid (see Err).
func To(alt tools.Tool, opts ...Option) Fallback {
	f := Fallback{alt: alt}
	for _, k := range DefaultKinds() {
		if f.kinds == nil {
			f.kinds = make(map[middleware.Kind]bool)
		}
		f.kinds[k] = true
	}
	for _, o := range opts {
		if o != nil {
			o(&f)
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

// Alternative is the alternative tool's name, or "" when there is none.
func (f Fallback) Alternative() string {
	if f.alt == nil {
		return ""
	}
	return f.alt.Name()
}

// Routes reports whether a failure of kind k goes to the alternative.
func (f Fallback) Routes(k middleware.Kind) bool { return f.kinds[k] && !never[k] }

// GuardPlain returns f with a plain alternative, one that does not report a
// structured outcome the way a *toolsafe.Tool does (a Run method returning a
// middleware.Result), replaced by guard(alt). It returns f as is when its
// alternative is not plain, when it has none, or when guard is nil. The
// replacement must keep alt's name.
//
// toolsafe.WithFallback uses it so that a plain alternative is called like
// an attempt of the primary, never bare: it wraps alt with toolsafe's own
// layers (panic recovery, the hard attempt timeout) using the primary's
// attempt timeout and deadline and no retries.
func (f Fallback) GuardPlain(guard func(alt tools.Tool) tools.Tool) Fallback {
	if f.alt == nil || guard == nil {
		return f
	}
	if _, ok := f.alt.(runner); ok {
		return f
	}
	if g := guard(f.alt); g != nil {
		f.alt = g
	}
	return f
}

// runner is a tool that reports a structured outcome: *toolsafe.Tool. The
// fallback cannot import toolsafe, which imports it.
type runner interface {
	Run(ctx context.Context, input string) middleware.Result
}

// Middleware returns the fallback layer. When the primary fails with a kind
// that is routed (see Routes), the alternative is called with the adapted
// input and the call record names it (middleware.Call.SetFallback, so
// Result.Fallback and the observers know). The call ends with:
//   - the primary's answer, when it succeeded;
//   - the primary's error, when its kind is not routed (a pause, a
//     cancellation, ...), when its time ran out while its approval gate was
//     still waiting for the approver (middleware.Call.AwaitingApproval: a
//     fallback is no way around an approval), or when the input adapter
//     failed;
//   - the alternative's answer, when it succeeded;
//   - the alternative's *middleware.ApprovalRequired when it paused, or
//     ctx.Err() when the caller cancelled during it;
//   - a copy of the primary's *middleware.Failure whose FallbackSkipped
//     names the alternative, when the alternative was not called because it
//     is already on this call's fallback path (see below);
//   - else a copy of the primary's *middleware.Failure whose
//     FallbackFailure says how the alternative failed.
//
// # Cycles
//
// The context the alternative is called with carries the fallback path:
// the names of the tools this call has fallen back from and to. The layer
// never routes to an alternative already on that path, or to one with the
// primary's own name, so a cycle built in code (a falls back to b, b to a
// plain tool that calls a) ends: the first fallback that would close the
// cycle is not taken, the call ends with the failure it had, and the
// message says the alternative was not called because it is already being
// tried (a WARN is logged). Tools are told apart by name, as the model does.
//
// An invalid Fallback (see Err) returns the tool as is; toolsafe.New
// reports it.
func (f Fallback) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		if f.alt == nil || f.err != nil {
			return next
		}
		altName := f.alt.Name()
		var plain tools.Tool
		if _, ok := f.alt.(runner); !ok {
			// Never bare: a panic is recovered, and the call returns when ctx
			// ends even if the alternative ignores it.
			plain = middleware.Chain(middleware.AttemptTimeout(0), middleware.Recover())(f.alt)
		}
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			out, err := next.Call(ctx, input)
			if err == nil || ctx.Err() != nil {
				return out, err
			}
			call := middleware.CallFrom(ctx)
			primary := middleware.ToFailure(ctx, call, err)
			if !f.Routes(primary.Kind) || call.AwaitingApproval() {
				return out, err // an approval that did not come in time is no way around it
			}
			path := pathFrom(ctx)
			if altName == next.Name() || slices.Contains(path, altName) {
				call.Logger().WarnContext(ctx, "toolsafe: fallback not taken: the alternative is already on this call's fallback path (a fallback cycle)",
					"tool", next.Name(), "fallback", altName, "path", strings.Join(path, " → "))
				primary.FallbackSkipped = altName
				return "", primary
			}
			altInput := input
			if f.adapt != nil {
				in, aerr := f.adapt(ctx, input)
				if aerr != nil {
					call.Logger().DebugContext(ctx, "toolsafe: fallback input could not be adapted",
						"tool", next.Name(), "fallback", f.alt.Name(), "error", aerr)
					return out, err
				}
				altInput = in
			}
			if call != nil {
				call.SetFallback(f.alt.Name())
			}
			actx := withPath(ctx, path, next.Name(), altName)
			altOut, altFailure, altErr := f.call(actx, plain, altInput)
			switch {
			case altErr != nil: // a pause or the caller's cancellation
				return "", altErr
			case altFailure != nil:
				primary.FallbackFailure = altFailure
				return "", primary
			}
			return altOut, nil
		})
	}
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

// call runs the alternative as a call of its own: with its structured
// result when it has one, else as a plain tool (plain: the alternative with
// panic recovery and a hard return when ctx ends) without the primary's call
// record. It returns the answer, or how the alternative failed for the
// model, or an error that must stay an error (a pause, a cancellation).
func (f Fallback) call(ctx context.Context, plain tools.Tool, input string) (string, *middleware.Failure, error) {
	if r, ok := f.alt.(runner); ok {
		res := r.Run(ctx, input)
		if res.Failure == nil {
			return res.Output, nil, nil
		}
		switch res.Failure.Kind {
		case middleware.KindApprovalRequired:
			var ar *middleware.ApprovalRequired
			if errors.As(res.Failure, &ar) {
				return "", nil, ar
			}
			return "", nil, &middleware.ApprovalRequired{Tool: f.alt.Name(), Input: input}
		case middleware.KindCanceled:
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
		}
		return "", res.Failure, nil
	}
	// A plain tool: hide the primary's call record, so the alternative does
	// not reuse its idempotency key or attempt numbers.
	actx := middleware.WithCall(ctx, nil)
	out, err := plain.Call(actx, input)
	if err == nil {
		return out, nil, nil
	}
	var ar *middleware.ApprovalRequired
	if errors.As(err, &ar) {
		return "", nil, ar
	}
	if ctx.Err() != nil {
		return "", nil, ctx.Err()
	}
	af := middleware.ToFailure(actx, nil, err)
	if af.Tool == "" {
		af.Tool = f.alt.Name()
	}
	if af.Attempts == 0 {
		af.Attempts = 1
	}
	return "", af, nil
}
