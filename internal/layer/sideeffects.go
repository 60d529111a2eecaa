package layer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"
)

// GuardSideEffects applies the side-effect rule to each attempt of a tool
// with side effects: an attempt that may have been applied — it reached
// the tool and then failed in a way that does not prove otherwise (see
// MayHaveApplied), or was cut short by the attempt timeout, the call's
// deadline or the caller, or that answered (it was applied, and a layer
// outside may still fail the call) — marks the call SideEffectUnknown, so its
// Failure and the model's message say "may have been applied; check before
// calling again" whichever layer ended it, and a fallback never runs after
// it. For SideEffectsWithoutKey it also ends the call, not retried: calling
// again would be a second action. Place it inside the retry and outside
// the approval gate, as toolsafe does. For NoSideEffects it returns the
// tool as is.
func GuardSideEffects(s middleware.SideEffects) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		if s != middleware.SideEffectsWithKey && s != middleware.SideEffectsWithoutKey {
			return next
		}
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			before := c.Attempts()
			out, err := next.Call(ctx, input)
			if c != nil && c.Attempts() == before {
				return out, err // it never reached the tool
			}
			if err == nil {
				// It was applied. Should a layer outside lose the answer
				// (one given as the deadline passed), the call still says
				// its action may have been applied, and no fallback runs.
				c.MarkSideEffectUnknown()
				return out, err
			}
			if ctx.Err() == nil && !MayHaveApplied(err) {
				return out, err
			}
			c.MarkSideEffectUnknown()
			if s == middleware.SideEffectsWithoutKey && ctx.Err() == nil {
				return "", &final{err: err}
			}
			return out, err
		})
	}
}

// MayHaveApplied reports whether the attempt that failed with err may have
// changed something upstream. It answers false only when the error's type
// proves the request was not acted on, and true otherwise:
//
//   - false: nil; middleware.NotApplied; a refused connection, a failed
//     dial or name lookup (the request never left); HTTP 408, 425, 429 and 503 and any RetryAfter (the
//     upstream said it did not act); a semantic ToolError, kind tool-error
//     (the tool knows the outcome and told the model); an approval pause or
//     denial, an open circuit, a full bulkhead, a spent budget, invalid
//     arguments (no attempt was made);
//   - true: an attempt timeout, a panic, a reset or closed connection, an
//     HTTP 500, 502 or 504, and any error it knows nothing about.
//
// A ToolError marked Transient or Permanent, or made with
// RetryableToolError, proves nothing by itself: it carries a message ("its
// MCP server failed to handle the call", "try later"), not a verdict on
// the outcome, so what decides is the rest of the chain (the cause given to
// WithCause), and with nothing there the outcome is unknown. Like Classify
// it looks at types only, through any depth of wrapping.
func MayHaveApplied(err error) bool {
	if err == nil || middleware.IsNotApplied(err) {
		return false
	}
	if k, _ := middleware.Classify(err); k == middleware.KindApprovalRequired {
		return false
	}
	var f *middleware.Failure
	if errors.As(err, &f) {
		if f.SideEffect == middleware.SideEffectUnknown {
			return true
		}
		switch f.Kind {
		case middleware.KindTimeout, middleware.KindPanic:
			return true
		case middleware.KindFailed:
			return f.Cause == nil || MayHaveApplied(f.Cause)
		}
		return false
	}
	switch kind, _ := middleware.Classify(err); kind {
	case middleware.KindTimeout, middleware.KindPanic:
		return true
	case middleware.KindToolError, middleware.KindArgsInvalid, middleware.KindCircuitOpen, middleware.KindBusy, middleware.KindBudget, middleware.KindApprovalDenied:
		return false
	}
	// Kind tool-error (an unmarked, non-retryable ToolError) answered
	// above; a ToolError that is still here is a message, not a verdict.
	_, ra := middleware.RetryAfterOf(err)
	var he *middleware.HTTPError
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case ra, errors.As(err, &dns):
		return false
	case errors.As(err, &he):
		switch he.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return false
		}
		return true
	case errors.Is(err, syscall.ECONNREFUSED):
		return false
	case errors.As(err, &op) && op.Op == "dial":
		return false
	}
	return true
}
