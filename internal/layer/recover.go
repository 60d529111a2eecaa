package layer

import (
	"context"
	"runtime/debug"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// Recover turns a panic in the tool into a tool-panic error, which is not
// retried: a bug does not go away on the next attempt. The panic's type and
// the stack are logged at ERROR, its value (which may hold a secret, such as
// a URL with a key) only at DEBUG; the model is told only that the tool
// failed internally. Place it inside AttemptTimeout, as toolsafe does, so
// that a panic on the attempt's goroutine cannot crash the process.
func Recover() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (out string, err error) {
			defer func() {
				r := recover()
				if r == nil {
					return
				}
				call.LogPanic(ctx, call.From(ctx), "tool", r, debug.Stack(), "attempt", middleware.AttemptNumber(ctx))
				out, err = "", &call.Panic{Who: "the tool", Value: r}
			}()
			return next.Call(ctx, input)
		})
	}
}
