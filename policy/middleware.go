package policy

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Middleware returns the retry layer of toolsafe: one failsafe-go executor,
// built once, of the retry policy made from r (nil: a single attempt), then
// policies, outermost first (a rate limiter of yours; not CircuitBreaker or
// Bulkhead, layers of their own), around the rest of the chain, per attempt.
// The call ends with the tool's answer, the last attempt's error as is, or a
// policy's refusal (see middleware.Classify); when it stops retrying, it
// records call.RetriesStopped, so the model is told not to repeat the
// call. It returns r.Validate's error for an invalid r. Safe for concurrent use.
func Middleware(r *Retry, policies ...failsafe.Policy[string]) (middleware.Middleware, error) {
	var all []failsafe.Policy[string]
	if r != nil {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		all = append(all, r.policy())
	}
	all = append(all, policies...)
	exec := failsafe.With(all...)
	// The first attempt of a retry with nothing else among the policies (no
	// budget to count it in flight, no policy of the caller's to run around
	// it) runs without entering the executor: most calls succeed at once,
	// and the executor costs more than the rest of the stack. After a
	// failure the executor takes over, its first execution answering with
	// the failure already judged, so its retries, delays and listeners go
	// exactly as if it had run the first attempt itself.
	direct := r != nil && r.Budget == nil && len(policies) == 0
	rt := &retrier{r: r, exec: exec, policies: policies}
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			if !direct {
				return rt.run(ctx, next, input, nil, time.Time{})
			}
			start := call.From(ctx).Start() // MaxDuration runs from the call's start
			if start.IsZero() {
				start = time.Now()
			}
			if r.Shared != nil {
				r.Shared.Admit(ctx, false)
			}
			out, err := next.Call(ctx, input)
			if err == nil {
				return out, nil
			}
			return rt.run(ctx, next, input, err, start)
		})
	}, nil
}

// retrier is the executor of one Middleware and what it was made of.
type retrier struct {
	r        *Retry
	exec     failsafe.Executor[string]
	policies []failsafe.Policy[string]
}

// run runs the call of next with input through the executor. firstErr is
// the error of the first attempt when it ran already, outside the
// executor, which then begins by answering with it, and start when the
// call began; nil and the zero time when the executor runs the first
// attempt itself.
func (rt *retrier) run(ctx context.Context, next tools.Tool, input string, firstErr error, start time.Time) (string, error) {
	r := rt.r
	if start.IsZero() {
		start = call.From(ctx).Start() // MaxDuration runs from the call's start
		if start.IsZero() {
			start = time.Now()
		}
		if r != nil && r.Shared != nil {
			r.Shared.Admit(ctx, false)
		}
	}
	var first *attemptError
	if firstErr != nil {
		first = r.judge(ctx, 1, start, firstErr)
		if !first.retryable || first.stop || first.budget || r.MaxRetries == 0 || ctx.Err() != nil {
			return "", stopped(ctx, first)
		}
	}
	// The last attempt's own outcome: failsafe-go drops it when ctx ends,
	// even an answer the tool gave as ctx ended, which must stand (a side
	// effect it reports was applied). A hedge among the policies runs
	// attempts at once, so it is locked.
	var lastMu sync.Mutex
	var last error
	var answer *string // an attempt's answer, once one answered
	if first != nil {
		last = first.err
	}
	out, err := rt.exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
		if first != nil && e.Attempts() == 1 {
			return "", first // judged already
		}
		out, err := next.Call(e.Context(), input)
		lastMu.Lock()
		last = err
		if err == nil && answer == nil {
			answer = &out
		}
		lastMu.Unlock()
		if err != nil && r != nil {
			return out, r.judge(e.Context(), e.Attempts(), start, err)
		}
		return out, err
	})
	if err == nil {
		return out, nil
	}
	lastMu.Lock()
	lastErr, answered := last, answer
	lastMu.Unlock()
	if answered != nil && ctx.Err() != nil {
		return *answered, nil // answered as ctx ended: failsafe-go dropped it
	}
	if ctx.Err() != nil && lastErr != nil {
		return "", lastErr // what the deadline or the caller cut short
	}
	if ae, ok := errors.AsType[*attemptError](err); ok {
		return "", stopped(ctx, ae)
	}
	if errors.Is(err, circuitbreaker.ErrOpen) {
		// A breaker of the caller's own among the policies.
		for _, p := range rt.policies {
			if cb, ok := p.(circuitbreaker.CircuitBreaker[string]); ok && cb.IsOpen() {
				return "", refused(err, "", cb.RemainingDelay())
			}
		}
	}
	return "", err
}

// stopped ends the call with the error of the attempt judged by ae,
// recording that retries stopped when it was retryable.
func stopped(ctx context.Context, ae *attemptError) error {
	if ae.budget {
		return &budgetRefused{err: ae.err}
	}
	if ae.retryable && ctx.Err() == nil {
		call.Record(ctx, call.RetriesStopped{Attempt: call.From(ctx).Attempts(), Wait: ae.wait})
	}
	return ae.err
}

// budgetRefused is a retry the shared retry budget refused: its kind is
// budget-exceeded (it is failsafe-go's budget.ErrExceeded), its cause the
// attempt that would have been retried.
type budgetRefused struct{ err error }

func (e *budgetRefused) Error() string { return "retry budget exceeded: " + e.err.Error() }
func (e *budgetRefused) Unwrap() error { return e.err }

// Is makes it budget.ErrExceeded.
func (e *budgetRefused) Is(target error) bool { return target == budget.ErrExceeded }
