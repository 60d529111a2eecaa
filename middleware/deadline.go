package middleware

import (
	"context"
	"time"

	"github.com/tmc/langchaingo/tools"
)

// Deadline caps the whole call, attempts and waits included, at d (layer 5 of
// DESIGN.md §2). Inner layers see it as the context's deadline: the retry
// schedules no attempt that could not start before it, and AttemptTimeout
// gives control back when it passes, even if the tool ignores its context.
// When it passes, the call ends with a *Failure of KindTimeout whose
// Retryable is false and whose Timeout is d; when it passed while the
// approval gate was still waiting for the approver (so the attempt never
// began), its Detail is "still waiting for approval" and the message says
// the tool was not called. A caller's own earlier deadline still wins and
// is returned as ctx.Err(). d of zero or less means no deadline of its own.
func Deadline(d time.Duration) Middleware {
	return func(next tools.Tool) tools.Tool {
		if d <= 0 {
			return next
		}
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			dctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			out, err := next.Call(dctx, input)
			if err == nil || ctx.Err() != nil || dctx.Err() == nil {
				return out, err
			}
			if _, retryable := Classify(err); !retryable {
				// An answer that settles the call — a pause, a semantic
				// error, a panic — stays what it is even at the deadline.
				return out, err
			}
			call := CallFrom(ctx)
			f := ToFailure(ctx, call, err)
			f.Kind, f.Retryable, f.Timeout, f.Detail = KindTimeout, false, d, ""
			if call.AwaitingApproval() {
				f.Detail = detailAwaitingApproval // the tool never ran: say so
			}
			return "", f
		})
	}
}
