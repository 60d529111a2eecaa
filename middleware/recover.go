package middleware

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/tmc/langchaingo/tools"
)

// Recover turns a panic in the tool into a *Failure of KindPanic, which is
// not retried: a bug does not go away on the next attempt. The panic value
// and the stack are logged at ERROR; the model is told only that the tool
// failed internally. Place it inside AttemptTimeout (DESIGN.md §2, layer 10),
// so that a panic on the attempt's goroutine cannot crash the process.
func Recover() Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (out string, err error) {
			defer func() {
				r := recover()
				if r == nil {
					return
				}
				call := CallFrom(ctx)
				call.Logger().ErrorContext(ctx, "toolsafe: tool panicked",
					"tool", next.Name(), "call_id", CallID(ctx), "attempt", AttemptNumber(ctx),
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				out, err = "", &Failure{
					Kind:     KindPanic,
					Tool:     next.Name(),
					Attempts: AttemptNumber(ctx),
					Cause:    fmt.Errorf("panic: %v", r),
				}
			}()
			return next.Call(ctx, input)
		})
	}
}
