package layer

import (
	"context"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// Deadline caps the whole call, attempts and waits included, at d: the
// layer inside the fallback and outside the retry. Inner layers see it as
// the context's deadline, with a cause that names it (see HowEnded): the
// retry schedules no attempt that could not start before it, and
// AttemptTimeout gives control back when it passes, even if the tool
// ignores its context. When it passes, the call records DeadlinePassed,
// and Surface ends the call with tool-timeout, not retryable, whose Timeout
// is d: "did not answer within d" when an attempt was running, or "was not
// called" when the call was still waiting for its approver or for a free
// slot, or had not begun its first attempt. An answer that settles the call (a pause, a semantic error, a
// panic) keeps its kind even at the deadline. A caller's own earlier
// deadline still wins and is returned as ctx.Err(). d of zero or less
// means no deadline of its own.
func Deadline(d time.Duration) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		if d <= 0 {
			return next
		}
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			dctx, cancel := context.WithTimeoutCause(ctx, d, &call.LimitCause{Ended: call.ByDeadline, Limit: d, Call: c.Self()})
			defer cancel()
			out, err := next.Call(dctx, input)
			if err != nil && call.HowEnded(dctx) == call.ByDeadline {
				c.Record(call.DeadlinePassed{Deadline: d})
			}
			return out, err
		})
	}
}
