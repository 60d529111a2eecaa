package middleware

import (
	"context"
	"errors"
	"sync"
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
			// returned and finish hand the end of an abandoned attempt over to
			// its goroutine: exactly one side sees the other's mark, so finish
			// (the AbandonedDone observers, the layers' holds) runs once.
			var (
				mu       sync.Mutex
				returned bool
				finish   func()
			)
			go func() {
				out, err := next.Call(actx, input)
				done <- answer{out, err}
				mu.Lock()
				returned = true
				f := finish
				mu.Unlock()
				if f != nil {
					f()
				}
			}()

			var a answer
			select {
			case a = <-done:
			case <-actx.Done():
				mu.Lock()
				if returned {
					mu.Unlock()
					a = <-done // it answered at the same moment
					break
				}
				finish = abandon(ctx, call, n)
				mu.Unlock()
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", timeoutFailure(next.Name(), n, d)
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

// abandon counts an attempt left running in the background and returns what
// must run when its tool returns: the release of every Hold in ctx (a
// bulkhead permit), then the AbandonedDone observers, which can therefore
// count on the permit being back.
func abandon(ctx context.Context, call *Call, attempt int) func() {
	release := keepHolds(ctx)
	recorded := func() {}
	if call != nil {
		recorded = call.RecordAbandoned(attempt)
	}
	return func() {
		release()
		recorded()
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
