package policy

import (
	"context"
	"errors"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Middleware returns the middleware that runs each call through one
// failsafe-go executor, built here once: the retry policy made from r (nil
// means a single attempt), then the given policies, outermost first (plain
// failsafe-go policies of your own, such as a rate limiter; toolsafe's
// CircuitBreaker and Bulkhead are layers of their own, see their
// Middleware), then the rest of the chain, once per attempt.
// It is layers 6 and 7 of DESIGN.md §2. Safe for concurrent use.
//
// The call ends with:
//   - the tool's answer, on success;
//   - the error of the last attempt as is, when it was not retryable
//     (a ToolError, a panic, an approval pause);
//   - a *middleware.Failure whose Retryable is false, when retries ran out
//     or the next one could not start in time (its Wait says how long the
//     upstream asked to wait, when that was why);
//   - a *middleware.Failure of KindCircuitOpen, KindBusy or KindBudget when
//     a breaker, bulkhead or retry budget refused;
//   - ctx.Err() when ctx ended.
//
// It returns the error of r.Validate when r is invalid.
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
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			var last error // the last attempt's own error: failsafe-go drops it when ctx ends
			out, err := exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
				out, err := next.Call(e.Context(), input)
				last = err
				if err != nil && r != nil {
					return out, r.judge(e, err)
				}
				return out, err
			})
			if err == nil {
				return out, nil
			}
			if ctx.Err() != nil {
				// The context ended, but an answer that settles the call (a
				// pause, a semantic error, a panic) is still that answer.
				if _, retryable := middleware.Classify(last); last != nil && !retryable {
					return "", last
				}
				return "", ctx.Err()
			}
			return "", finish(ctx, next.Name(), err, policies)
		})
	}, nil
}

// finish turns what the executor returned into the error that ends the call.
func finish(ctx context.Context, tool string, err error, policies []failsafe.Policy[string]) error {
	call := middleware.CallFrom(ctx)
	var ae *attemptError
	if errors.As(err, &ae) {
		if !ae.retryable {
			return ae.err
		}
		f := middleware.ToFailure(ctx, call, ae.err)
		f.Retryable = false
		f.Wait = ae.wait
		if call != nil {
			f.Attempts = call.Attempts()
		}
		return f
	}
	refused := func(kind middleware.Kind) *middleware.Failure {
		f := middleware.ToFailure(ctx, call, err)
		f.Kind, f.Retryable, f.Tool = kind, false, tool
		return f
	}
	switch {
	case errors.Is(err, circuitbreaker.ErrOpen):
		f := refused(middleware.KindCircuitOpen)
		for _, p := range policies {
			if cb, ok := p.(circuitbreaker.CircuitBreaker[string]); ok && cb.IsOpen() {
				f.Wait = max(f.Wait, cb.RemainingDelay())
			}
		}
		return f
	case errors.Is(err, bulkhead.ErrFull):
		return refused(middleware.KindBusy)
	case errors.Is(err, budget.ErrExceeded):
		return refused(middleware.KindBudget)
	}
	return err
}
