package layer

import (
	"context"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/fault"
	"github.com/toolsafe/toolsafe/middleware"
)

// GuardSideEffects applies the side-effect rule to each attempt of a tool
// with side effects: an attempt that may have been applied — it reached
// the tool and then failed in a way that does not prove otherwise (see
// middleware.MayHaveApplied), or was cut short by the attempt timeout, the call's
// deadline or the caller — marks the call SideEffectUnknown, so its
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
			if err == nil || c.Attempts() == before && c != nil {
				return out, err // it never reached the tool
			}
			if ctx.Err() == nil && !middleware.MayHaveApplied(err) {
				return out, err
			}
			c.MarkSideEffectUnknown()
			if s == middleware.SideEffectsWithoutKey && ctx.Err() == nil {
				return "", &fault.Final{Err: err}
			}
			return out, err
		})
	}
}
