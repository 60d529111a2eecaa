package policy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/toolsafe/toolsafe/middleware"
)

// Retry says how a failed attempt is retried. Only transient failures are
// retried (middleware.Classify): foreign errors, middleware.Transient,
// middleware.RetryAfter, retryable ToolErrors and attempt timeouts. Semantic
// errors, panics, approval pauses, open circuits and full bulkheads end the
// call at once. The zero Retry makes one attempt and no retry.
type Retry struct {
	// MaxRetries is the number of retries after the first attempt: 3 means
	// up to 4 attempts. Zero means no retry. It must not be negative.
	MaxRetries int
	// Backoff gives the delay before each retry. A Retry-After asked for by
	// the upstream is a floor: the delay is the larger of the two. The zero
	// Backoff waits as DefaultBackoff (0.5s, 1s, 2s, ... up to 30s), so that
	// retries are never a busy loop by accident; Constant(0) retries with no
	// wait, when that is really what you want.
	Backoff Backoff
	// MaxDuration caps the retrying, from the start of the first attempt,
	// delays included: no retry is scheduled that could not start before it
	// runs out. Zero means no cap of its own; the call's deadline (context
	// deadline, toolsafe.WithDeadline) always caps it too.
	MaxDuration time.Duration
	// MaxWait is the longest single wait toolsafe sleeps before a retry. A
	// longer one — a Retry-After of an hour, a backoff without Max late in a
	// long series — ends the call now instead, and the model is told how
	// long the service asked to wait. Zero means 1 minute:
	// an agent should not sit silent longer, even when no deadline is set.
	// It must not be negative.
	MaxWait time.Duration
	// Budget, if not nil, is a failsafe-go retry budget, shared by the tools
	// of one dependency, so many callers retrying a struggling service cannot
	// multiply its load. When it is spent, the call ends with
	// budget-exceeded instead of retrying.
	Budget budget.Budget
	// Shared, if not nil, is a retry budget shared beyond this process (by
	// the replicas of a fleet, through a store such as Redis): it is told of
	// every attempt and asked before every retry; when it refuses, the call
	// ends with budget-exceeded instead of retrying. It may be given with
	// Budget or instead of it.
	Shared SharedBudget
}

// SharedBudget is a retry budget kept outside the process, so that the
// replicas of a fleet share one: retries fleet-wide stay within a ratio of
// the attempts. A SharedBudget must be safe for concurrent use, and must
// answer quickly whatever happens to its store (a store that is down
// answers from a local budget; see the module redisstore).
type SharedBudget interface {
	// Admit is called as an attempt begins, and reports whether it may: a
	// first attempt (retry false) is always admitted and counted; a retry
	// is admitted, and counted, only while retries stay within the budget.
	Admit(ctx context.Context, retry bool) bool
}

// defaultMaxWait is the longest wait before a retry when Retry.MaxWait is
// zero.
const defaultMaxWait = time.Minute

// Validate reports a Retry that cannot work, naming every problem:
// negative MaxRetries, MaxWait or MaxDuration, or an invalid Backoff.
func (r Retry) Validate() error {
	var errs []error
	if r.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("retry: max retries %d is negative: use 0 for a single attempt, 3 for up to 4 attempts", r.MaxRetries))
	}
	if r.MaxWait < 0 {
		errs = append(errs, fmt.Errorf("retry: max wait %v is negative: use 0 for the default of %v", r.MaxWait, defaultMaxWait))
	}
	if r.MaxDuration < 0 {
		errs = append(errs, fmt.Errorf("retry: max duration %v is negative: use 0 for no cap of its own", r.MaxDuration))
	}
	for _, err := range r.Backoff.problems() {
		errs = append(errs, fmt.Errorf("retry: %w", err))
	}
	return errors.Join(errs...)
}

// attemptError carries one failed attempt through failsafe-go with the
// decisions taken for it: whether it may be retried, the wait before the
// next attempt, and whether to stop because that attempt could not start in
// time.
type attemptError struct {
	err       error
	budget    bool // a retry the shared budget refused
	retryable bool
	delay     time.Duration // the wait before the next attempt
	stop      bool          // retryable, but the next attempt would not start in time
	wait      time.Duration // the Retry-After that did not fit, if that was why
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// policy builds the failsafe-go retry policy. Classification and delays are
// decided per attempt by judge and travel in the attemptError, so the policy
// itself holds no state of a call and one policy serves every call.
func (r Retry) policy() retrypolicy.RetryPolicy[string] {
	b := retrypolicy.NewBuilder[string]().
		WithMaxRetries(r.MaxRetries).
		HandleIf(func(_ string, err error) bool { return err != nil }).
		AbortIf(func(_ string, err error) bool {
			ae, ok := errors.AsType[*attemptError](err)
			if !ok {
				return err != nil // an inner policy refused: circuit open, bulkhead full
			}
			return !ae.retryable || ae.stop || ae.budget
		}).
		WithDelayFunc(func(e failsafe.ExecutionAttempt[string]) time.Duration {
			if ae, ok := errors.AsType[*attemptError](e.LastError()); ok {
				return ae.delay
			}
			return 0
		}).
		ReturnLastFailure().
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[string]) {
			call.Record(e.Context(), call.RetryScheduled{
				Attempt: e.Attempts(), Delay: e.Delay, Err: unwrapAttempt(e.LastError())})
		})
	if r.Budget != nil {
		b = b.WithBudget(r.Budget)
	}
	return b.Build()
}

// judge classifies the error of attempt e and decides the wait before the
// next attempt, or to stop when that wait is longer than MaxWait or the next
// attempt could not start before the deadline.
func (r Retry) judge(ctx context.Context, n int, start time.Time, err error) *attemptError {
	_, retryable := middleware.Classify(err)
	ae := &attemptError{err: err, retryable: retryable}
	if !retryable || n > r.MaxRetries || ctx.Err() != nil {
		return ae
	}
	if r.Shared != nil && !r.Shared.Admit(ctx, true) {
		ae.budget = true // the fleet's retries are spent: stop, as budget-exceeded
		return ae
	}
	delay := r.backoff().Delay(n)
	asked, hasAsked := middleware.RetryAfterOf(err)
	delay = max(delay, asked)
	ae.delay = delay
	maxWait := r.MaxWait
	if maxWait == 0 {
		maxWait = defaultMaxWait
	}
	if delay > maxWait {
		ae.stop = true
		if hasAsked && asked > maxWait {
			ae.wait = asked
		}
		return ae
	}
	if deadline, ok := r.deadline(ctx, start); ok {
		now := time.Now()
		if !now.Add(delay).Before(deadline) {
			ae.stop = true
			if hasAsked && !now.Add(asked).Before(deadline) {
				ae.wait = asked
			}
		}
	}
	return ae
}

// backoff is the Backoff the retry waits by: DefaultBackoff for the zero
// one.
func (r Retry) backoff() Backoff { return r.Backoff.OrDefault() }

// deadline is the earlier of the context's deadline and MaxDuration after
// the first attempt began.
func (r Retry) deadline(ctx context.Context, start time.Time) (time.Time, bool) {
	deadline, ok := ctx.Deadline()
	if r.MaxDuration > 0 {
		capped := start.Add(r.MaxDuration)
		if !ok || capped.Before(deadline) {
			deadline, ok = capped, true
		}
	}
	return deadline, ok
}

func unwrapAttempt(err error) error {
	if ae, ok := errors.AsType[*attemptError](err); ok {
		return ae.err
	}
	return err
}
