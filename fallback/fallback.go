package fallback

import (
	"context"
	"errors"
	"fmt"

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
// alternative has its own retries, validation and approval gate. A nil alt
// makes the Fallback invalid (see Err).
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
//     cancellation, ...), or the input adapter failed;
//   - the alternative's answer, when it succeeded;
//   - the alternative's *middleware.ApprovalRequired when it paused, or
//     ctx.Err() when the caller cancelled during it;
//   - else a copy of the primary's *middleware.Failure whose
//     FallbackFailure says how the alternative failed.
//
// An invalid Fallback (see Err) returns the tool as is; toolsafe.New
// reports it.
func (f Fallback) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		if f.alt == nil || f.err != nil {
			return next
		}
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			out, err := next.Call(ctx, input)
			if err == nil || ctx.Err() != nil {
				return out, err
			}
			call := middleware.CallFrom(ctx)
			primary := middleware.ToFailure(ctx, call, err)
			if !f.Routes(primary.Kind) {
				return out, err
			}
			altInput := input
			if f.adapt != nil {
				in, aerr := f.adapt(ctx, input)
				if aerr != nil {
					call.Logger().DebugContext(ctx, "toolsafe: fallback input could not be adapted",
						"tool", next.Name(), "fallback", f.alt.Name(), "error", aerr.Error())
					return out, err
				}
				altInput = in
			}
			if call != nil {
				call.SetFallback(f.alt.Name())
			}
			altOut, altFailure, altErr := f.call(ctx, altInput)
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

// call runs the alternative as a call of its own: with its structured
// result when it has one, else as a plain tool without the primary's call
// record. It returns the answer, or how the alternative failed for the
// model, or an error that must stay an error (a pause, a cancellation).
func (f Fallback) call(ctx context.Context, input string) (string, *middleware.Failure, error) {
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
	out, err := f.alt.Call(actx, input)
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
