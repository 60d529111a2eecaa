package middleware

import (
	"context"
	"errors"
	"time"

	"github.com/tmc/langchaingo/tools"
)

// AttemptTimeout runs each attempt on its own goroutine and gives control
// back to the caller when d has passed or ctx has ended, even if the tool
// ignores its context. It is the hard attempt timeout of DESIGN.md §2
// (layer 9).
//
// It also begins the attempt in the call record (Call.BeginAttempt), so every
// stack must have one AttemptTimeout; d of zero or less means no time limit
// of its own, but the caller's context and the call's deadline still hold.
//
// When d passes first, the attempt ends with a *Failure of KindTimeout whose
// Retryable is true; when ctx ends first, with ctx.Err(). The tool's context
// is canceled either way. A tool that ignores it is abandoned: it finishes
// in the background, is counted (Call.Abandoned, Observer.Abandoned) and its
// answer is dropped. A tool that returns an error because its own context
// expired counts as a timeout too.
func AttemptTimeout(d time.Duration) Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			call := CallFrom(ctx)
			n := 1
			if call != nil {
				ctx, n = call.BeginAttempt(ctx)
			}
			actx := ctx
			cancel := context.CancelFunc(func() {})
			if d > 0 {
				actx, cancel = context.WithTimeout(ctx, d)
			}
			defer cancel()
			if actx.Done() == nil {
				// Nothing can end this attempt early: no need for a goroutine.
				return next.Call(actx, input)
			}

			type answer struct {
				out string
				err error
			}
			done := make(chan answer, 1)
			abandoned := make(chan func(), 1)
			go func() {
				out, err := next.Call(actx, input)
				done <- answer{out, err}
				select {
				case finish := <-abandoned:
					finish()
				default:
				}
			}()

			var a answer
			select {
			case a = <-done:
			case <-actx.Done():
				select {
				case a = <-done: // it answered at the same moment
				default:
					if call != nil {
						abandoned <- call.RecordAbandoned(n)
					}
					if ctx.Err() != nil {
						return "", ctx.Err()
					}
					return "", timeoutFailure(next.Name(), n, d)
				}
			}
			if a.err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
				// The tool gave up because its attempt's time was up.
				f := timeoutFailure(next.Name(), n, d)
				f.Cause = a.err
				return "", f
			}
			return a.out, a.err
		})
	}
}

func timeoutFailure(tool string, attempt int, d time.Duration) *Failure {
	return &Failure{
		Kind:      KindTimeout,
		Tool:      tool,
		Attempts:  attempt,
		Retryable: true,
		Timeout:   d,
		Cause:     context.DeadlineExceeded,
	}
}
