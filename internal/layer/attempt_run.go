package layer

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/callkey"
)

// attempt runs attempt n of the call of next with input: on a goroutine of
// its own when it can be cut short (onGoroutine). It reports whether the
// attempt was abandoned.
//
// Most tools answer before the caller's goroutine would park, so the
// attempt's timer and its cancelable context are made only when the tool
// has not answered by then (or asks for its context's Done channel): a call
// that succeeds at once pays for neither.
func (g *attemptGauge) attempt(ctx context.Context, c *call.Call, n int, d time.Duration, onGoroutine bool, next tools.Tool, input string) (out string, abandoned bool, err error) {
	if !onGoroutine {
		// Nothing can end this attempt early: no need for a goroutine.
		out, err := next.Call(&numberedCtx{Context: ctx, n: n}, input)
		return out, false, err
	}
	// One allocation holds the attempt: its context (which carries its
	// number), the cause its timeout ends it with, and the hand-over with
	// its goroutine.
	r := &attemptRun{parent: ctx, next: next, input: input, gauge: g,
		cause: call.LimitCause{Ended: call.ByAttemptTimeout, Limit: d, Call: c.Self()}}
	r.ctx = attemptCtx{n: n, r: r}
	now := time.Now()
	if d > 0 {
		r.expiry, r.inside = now.Add(d-graceInside(d)), graceInside(d) > 0
		r.limitAt = now.Add(d)
	}
	if inBubble(now) {
		// A pooled worker is outside the caller's testing/synctest
		// bubble, where it could neither use the bubble's timers and
		// channels nor let the bubble's clock advance: the attempt gets a
		// goroutine of its own, in the bubble.
		go r.run()
	} else {
		workers.start(r)
	}
	runtime.Gosched() // let a tool that answers at once do so before this goroutine parks
	if r.answered.Load() {
		out, err := r.result(d)
		return out, false, err
	}
	return r.wait(ctx, c, n, d)
}

// wait waits for the attempt's tool to answer, for its time to be up or for
// ctx to end, and then, if the tool has not answered, up to its grace for
// it to return.
func (r *attemptRun) wait(ctx context.Context, c *call.Call, n int, d time.Duration) (string, bool, error) {
	inner := r.inner() // ends when the tool answers (its goroutine cancels it) or ctx ends
	var t *time.Timer
	var expired <-chan time.Time
	if !r.expiry.IsZero() {
		if dl, ok := ctx.Deadline(); !ok || r.expiry.Before(dl) {
			t = time.NewTimer(time.Until(r.expiry))
			defer t.Stop()
			expired = t.C
		}
	}
	select {
	case <-inner.Done():
	case <-expired:
		r.cancelInner(&r.cause) // the tool's context ends by the attempt's own limit
	}
	if r.answered.Load() {
		out, err := r.result(d)
		return out, false, err
	}
	graceEnd := time.Now().Add(AbandonGrace)
	if r.inside && context.Cause(inner) == error(&r.cause) {
		graceEnd = r.limitAt // the grace is inside the limit
	}
	if !r.waitOrAbandon(ctx, c, n, t, graceEnd) {
		out, err := r.result(d) // it returned within the grace
		return out, false, err
	}
	if call.HowEnded(&r.ctx) == call.ByAttemptTimeout {
		return "", true, &call.AttemptTimeout{Limit: d}
	}
	return "", true, ctx.Err()
}

// result is the attempt's outcome once its tool has returned.
func (r *attemptRun) result(d time.Duration) (string, error) {
	a := r.answer
	// Only a context made before the tool answered can have ended by the
	// attempt's limit (the caller makes it before it waits for that).
	if a.err != nil && r.made.Load() && call.HowEnded(&r.ctx) == call.ByAttemptTimeout {
		// The tool gave up because its attempt's time was up.
		return "", &call.AttemptTimeout{Limit: d, Err: a.err}
	}
	return a.out, a.err
}

// numberedCtx is the context of an attempt that nothing can cut short: ctx
// with the attempt's number.
type numberedCtx struct {
	context.Context
	n int
}

func (nc *numberedCtx) Value(key any) any {
	if key == (callkey.Attempt{}) {
		return nc.n
	}
	return nc.Context.Value(key)
}

// attemptCtx is the context of an attempt on a goroutine of its own: it
// carries the attempt's number, reports the attempt's deadline, and ends
// when that passes, when the caller's context ends, or once the tool has
// answered. Until the tool asks for its Done channel, or the caller waits
// for it, or the attempt is over, it is its caller's context with no
// cancelable context of its own.
type attemptCtx struct {
	n int
	r *attemptRun
}

func (ac *attemptCtx) Deadline() (time.Time, bool) {
	r := ac.r
	dl, ok := r.parent.Deadline()
	if !r.expiry.IsZero() && (!ok || r.expiry.Before(dl)) {
		return r.expiry, true
	}
	return dl, ok
}

func (ac *attemptCtx) Done() <-chan struct{} { return ac.r.inner().Done() }

func (ac *attemptCtx) Err() error {
	r := ac.r
	if !r.made.Load() && !r.answered.Load() {
		return r.parent.Err()
	}
	inner := r.inner()
	err := inner.Err()
	if err != nil && context.Cause(inner) == error(&r.cause) {
		return context.DeadlineExceeded // its own limit passed, as for context.WithTimeout
	}
	return err
}

func (ac *attemptCtx) Value(key any) any {
	if key == (callkey.Attempt{}) {
		return ac.n
	}
	if r := ac.r; r.made.Load() || r.answered.Load() {
		// context.Cause finds the cancelable context through it; once the
		// tool has answered, that is made, and canceled.
		return r.inner().Value(key)
	}
	return ac.r.parent.Value(key)
}

// attemptRun is one attempt on its own goroutine: one allocation for its
// context, its answer and the hand-over of an abandoned attempt's end.
type attemptRun struct {
	ctx     attemptCtx
	parent  context.Context // the caller's
	cause   call.LimitCause
	expiry  time.Time // when the tool's context ends by the attempt's own limit; zero for none
	limitAt time.Time // when the attempt's own limit passes
	inside  bool      // the grace is inside the limit: the caller has control back at limitAt
	next    tools.Tool
	input   string
	gauge   *attemptGauge // the tool's attempts on goroutines
	answer  struct {
		out string
		err error
	}
	answered atomic.Bool // answer is set

	// The attempt's own cancelable context, made on first use (inner):
	// made is set once innerCtx and cancelInner are.
	made        atomic.Bool
	innerCtx    context.Context
	cancelInner context.CancelCauseFunc

	// mu guards making the context, and returned, notify and finish, which
	// hand the end of an abandoned attempt over to its goroutine: exactly one
	// side sees the other's mark, so finish (the AbandonedReturned observers,
	// the layers' holds) runs once.
	mu       sync.Mutex
	returned bool
	notify   chan struct{} // closed when the tool returns, if set: the grace waits on it
	finish   func()
}

// attemptGauge counts one tool's attempts on goroutines of their own, and
// those among them that were abandoned.
type attemptGauge struct {
	running, stuck atomic.Int64
}

// inner is the attempt's cancelable context, made on first use. One made
// after the tool answered is canceled at once, as the attempt's context is
// once it is over.
func (r *attemptRun) inner() context.Context {
	if r.made.Load() {
		return r.innerCtx
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.made.Load() {
		r.innerCtx, r.cancelInner = context.WithCancelCause(r.parent)
		r.made.Store(true)
		// run stores answered before it loads made: one of the two sees
		// the other's mark and cancels.
		if r.answered.Load() {
			r.cancelInner(nil)
		}
	}
	return r.innerCtx
}

func (r *attemptRun) run() {
	returned := false
	defer func() {
		// Deferred, so that a tool that ends its goroutine with
		// runtime.Goexit still answers and returns what it holds.
		if !returned {
			r.answer.out, r.answer.err = "", call.Goexit
		}
		r.gauge.running.Add(-1)
		r.answered.Store(true)
		if r.made.Load() {
			r.cancelInner(nil) // wakes the caller, if it waits
		}
		r.mu.Lock()
		r.returned = true
		f := r.finish
		if r.notify != nil {
			close(r.notify)
		}
		r.mu.Unlock()
		if f != nil {
			f()
		}
	}()
	r.answer.out, r.answer.err = r.next.Call(&r.ctx, r.input)
	returned = true
}

// waitOrAbandon waits until graceEnd for the tool, whose context has ended,
// to return, on t when it is not nil. If it does not, the attempt is
// abandoned: it is counted, and its goroutine releases the holds of ctx and
// records AbandonedReturned when the tool returns. It reports whether it
// abandoned the attempt.
func (r *attemptRun) waitOrAbandon(ctx context.Context, c *call.Call, attempt int, t *time.Timer, graceEnd time.Time) bool {
	runtime.Gosched() // a tool that honours its context is runnable now
	r.mu.Lock()
	if !r.returned {
		r.notify = make(chan struct{})
		notify := r.notify
		r.mu.Unlock()
		if t == nil {
			t = time.NewTimer(time.Until(graceEnd))
			defer t.Stop()
		} else {
			t.Reset(time.Until(graceEnd))
		}
		select {
		case <-notify:
		case <-t.C:
		}
		r.mu.Lock()
	}
	if r.returned {
		r.mu.Unlock()
		return false
	}
	stuck := &r.gauge.stuck
	stuck.Add(1)
	release := keepHolds(ctx)
	told := make(chan struct{})
	r.finish = func() {
		release()
		stuck.Add(-1)
		<-told // AbandonedReturned comes after AttemptAbandoned
		c.Record(call.AbandonedReturned{Attempt: attempt})
	}
	r.mu.Unlock()
	c.Record(call.AttemptAbandoned{Attempt: attempt}) // observers run outside the lock
	close(told)
	return true
}

// synctestEpoch is where testing/synctest's fake clock starts (midnight
// UTC, 2000-01-01): a clock before a year past it is a bubble's, since no
// real clock toolsafe runs on reads 2000.
var synctestEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// inBubble reports whether now, read from time.Now, is a testing/synctest
// bubble's fake time.
func inBubble(now time.Time) bool { return now.Before(synctestEpoch) }
