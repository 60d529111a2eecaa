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
			if err := ctx.Err(); err != nil {
				return "", err // the caller is gone: start nothing
			}
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

			r := &attemptRun{done: make(chan struct{})}
			go r.run(next, actx, input, n)

			select {
			case <-r.done:
			case <-actx.Done():
				if !r.abandon(ctx, call, n) {
					<-r.done // it answered at the same moment
					break
				}
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", timeoutFailure(next.Name(), n, d)
			}
			a := r.answer
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

// attemptRun is one attempt on its own goroutine: one allocation for its
// answer and for the hand-over of an abandoned attempt's end.
type attemptRun struct {
	done   chan struct{} // closed when answer is set
	answer struct {
		out string
		err error
	}

	// returned and finish hand the end of an abandoned attempt over to its
	// goroutine: exactly one side sees the other's mark, so finish (the
	// AbandonedDone observers, the layers' holds) runs once.
	mu       sync.Mutex
	returned bool
	finish   func()
}

func (r *attemptRun) run(next tools.Tool, ctx context.Context, input string, attempt int) {
	returned := false
	defer func() {
		// Deferred, so that a tool that ends its goroutine with
		// runtime.Goexit still answers and returns what it holds.
		if !returned {
			r.answer.out, r.answer.err = "", &Failure{Kind: KindPanic, Tool: next.Name(), Attempts: attempt,
				Cause: errors.New("the tool called runtime.Goexit")}
		}
		close(r.done)
		r.mu.Lock()
		r.returned = true
		f := r.finish
		r.mu.Unlock()
		if f != nil {
			f()
		}
	}()
	r.answer.out, r.answer.err = next.Call(ctx, input)
	returned = true
}

// abandon leaves the attempt running: it is counted, and its goroutine
// releases the holds of ctx and tells the observers when the tool returns.
// It reports false, and does nothing, when the tool has already returned.
func (r *attemptRun) abandon(ctx context.Context, call *Call, attempt int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.returned {
		return false
	}
	r.finish = abandon(ctx, call, attempt)
	return true
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
