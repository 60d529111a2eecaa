package layer

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/fault"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// DefaultMaxAbandoned is how many abandoned attempts of one tool may still
// be running at once before the attempt timeout refuses new attempts of it
// (see MaxAbandoned).
const DefaultMaxAbandoned = 64

// AbandonGrace is how long, at most, the attempt timeout waits once an
// attempt's context has ended for the tool to return, before it gives
// control back and counts the attempt abandoned: a tool that honours its
// context returns within it (the attempt timeout yields to the tool's
// goroutine meanwhile) and is not counted; only one that ignores its
// context is.
const AbandonGrace = time.Millisecond

// yieldGrace is how long, within AbandonGrace, the attempt timeout first
// yields to the tool's goroutine before it waits on a timer: a tool that
// honours its context is runnable at once and mostly returns within it,
// and a timer this short would wait for the poller's millisecond anyway.
const yieldGrace = 200 * time.Microsecond

// AttemptOption configures AttemptTimeout.
type AttemptOption interface{ applyAttempt(*attemptConfig) }

type attemptConfig struct {
	maxAbandoned int
	hook         AttemptHook
}

// AttemptHook is told of each attempt as it begins and as it ends: an
// attempt span (otelhook) is one. Begin is called on the caller's
// goroutine once the attempt is numbered (n, 1-based), before the tool
// runs; the context it returns is the tool's (the span's), and the
// AttemptEnd's End is called exactly once, on the caller's goroutine, when
// the attempt ends for its caller: with the tool's error (nil on success)
// or, abandoned true, when the attempt timeout gave it up while the tool
// still runs.
type AttemptHook interface {
	Begin(ctx context.Context, n int) (context.Context, AttemptEnd)
}

// AttemptEnd ends what an AttemptHook began for one attempt.
type AttemptEnd interface {
	End(err error, abandoned bool)
}

// WithAttemptHook gives the attempt timeout a hook told of each attempt
// (see AttemptHook). Starting an attempt's span here, on the caller's
// goroutine, rather than in a layer inside the attempt timeout, spares the
// attempt's fresh goroutine the tracing SDK's deep calls. Nil means none.
func WithAttemptHook(h AttemptHook) AttemptOption {
	return attemptOptionFunc(func(c *attemptConfig) { c.hook = h })
}

type attemptOptionFunc func(*attemptConfig)

func (f attemptOptionFunc) applyAttempt(c *attemptConfig) { f(c) }

// MaxAbandoned bounds what a tool that ignores its context can pile up
// (DefaultMaxAbandoned when not given): once an attempt of the tool has
// been abandoned and is still running, at most n of its attempts run at
// once; past that, an attempt is refused at once with tool-busy, and the
// model is told that earlier attempts are still stuck. A tool with no
// stuck attempt may run 16n attempts at once (1,024 by default) before
// the next is refused with tool-busy. So abandoned attempts number at most
// 16n, and at most n once the tool has shown that it ignores its context.
// n of zero or less means DefaultMaxAbandoned.
func MaxAbandoned(n int) AttemptOption {
	return attemptOptionFunc(func(c *attemptConfig) {
		if n > 0 {
			c.maxAbandoned = n
		}
	})
}

// AttemptTimeout runs each attempt on its own goroutine and gives control
// back to the caller when d has passed or ctx has ended, even if the tool
// ignores its context: the hard attempt timeout, inside the circuit breaker
// and bulkhead and outside the attempt span and panic recovery.
//
// It also begins the attempt in the call record (see AttemptNumber and
// Call.Attempts), so every stack must have one AttemptTimeout; d of zero or
// less means no time limit of its own, but the caller's context and the
// call's deadline still hold.
//
// When d passes first, the attempt ends with a tool-timeout error (it is
// failsafe-go's timeout.ErrExceeded too), which is retried; when ctx ends
// first, with ctx's error. The tool's context is canceled either way, with
// a cause that says which (see HowEnded). A tool that returns within
// AbandonGrace of that is waited for; one that ignores it is abandoned: it
// finishes in the background, is counted (Result.Abandoned, the
// AttemptAbandoned and AbandonedReturned events) and its answer is dropped.
// A tool that returns an error because its own attempt's time was up counts
// as a timeout too. Past MaxAbandoned abandoned attempts still running, new
// attempts are refused with tool-busy.
func AttemptTimeout(d time.Duration, opts ...AttemptOption) middleware.Middleware {
	cfg := attemptConfig{maxAbandoned: DefaultMaxAbandoned}
	for _, o := range opts {
		if o != nil {
			o.applyAttempt(&cfg)
		}
	}
	return func(next tools.Tool) tools.Tool {
		var g attemptGauge // this tool's attempts on goroutines, and the abandoned ones
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			if err := ctx.Err(); err != nil {
				return "", err // the caller is gone: start nothing
			}
			onGoroutine := d > 0 || ctx.Done() != nil
			if onGoroutine {
				// Reserve a place among the tool's attempts in flight first,
				// so that callers racing here cannot all pass.
				switch running := g.running.Add(1); {
				case g.stuck.Load() > 0 && running > int64(cfg.maxAbandoned):
					g.running.Add(-1)
					return "", fault.ErrStuck
				case running > 16*int64(cfg.maxAbandoned):
					g.running.Add(-1)
					return "", fault.ErrTooMany
				}
			}
			c := call.From(ctx)
			n := c.BeginAttempt()
			if cfg.hook != nil {
				hctx, end := cfg.hook.Begin(ctx, n)
				out, abandoned, err := g.attempt(hctx, c, n, d, &cfg, next, input)
				end.End(err, abandoned)
				return out, err
			}
			out, _, err := g.attempt(ctx, c, n, d, &cfg, next, input)
			return out, err
		})
	}
}

// attempt runs attempt n of the call of next with input: on a goroutine of
// its own when it can be cut short. It reports whether the attempt was
// abandoned.
func (g *attemptGauge) attempt(ctx context.Context, c *call.Call, n int, d time.Duration, cfg *attemptConfig, next tools.Tool, input string) (out string, abandoned bool, err error) {
	onGoroutine := d > 0 || ctx.Done() != nil
	// One allocation holds the attempt: its context (which carries its
	// number), the cause its timeout ends it with, and the hand-over with
	// its goroutine.
	r := &attemptRun{cause: fault.LimitCause{Ended: fault.ByAttemptTimeout, Limit: d, Call: c.Self()}}
	r.ctx = attemptCtx{Context: ctx, n: n}
	actx := &r.ctx
	if !onGoroutine {
		// Nothing can end this attempt early: no need for a goroutine.
		out, err := next.Call(actx, input)
		return out, false, err
	}
	// The attempt's context ends when its time is up, when ctx ends, or
	// when the tool returns (its goroutine cancels it then), so the caller
	// waits on that one channel.
	var cancel context.CancelFunc
	if d > 0 {
		r.ctx.Context, cancel = context.WithTimeoutCause(ctx, d, &r.cause)
	} else {
		r.ctx.Context, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	r.cancel = cancel
	r.gauge = g // its place among the tool's attempts, reserved by the caller; the goroutine gives it back
	go r.run(next, input)

	runtime.Gosched() // let a tool that answers at once do so before this goroutine parks
	if !r.answered.Load() {
		<-actx.Done()
	}
	if !r.answered.Load() {
		if !r.waitOrAbandon(ctx, c, n, &g.stuck) {
			out, err := r.result(actx, d) // it returned within the grace
			return out, false, err
		}
		if fault.HowEnded(actx) == fault.ByAttemptTimeout {
			return "", true, &fault.AttemptTimeout{Limit: d}
		}
		return "", true, ctx.Err()
	}
	out, err = r.result(actx, d)
	return out, false, err
}

// result is the attempt's outcome once its tool has returned.
func (r *attemptRun) result(actx context.Context, d time.Duration) (string, error) {
	a := r.answer
	if a.err != nil && fault.HowEnded(actx) == fault.ByAttemptTimeout {
		// The tool gave up because its attempt's time was up.
		return "", &fault.AttemptTimeout{Limit: d, Err: a.err}
	}
	return a.out, a.err
}

// attemptCtx is an attempt's context: it carries the attempt's number.
type attemptCtx struct {
	context.Context
	n int
}

func (ac *attemptCtx) Value(key any) any {
	if key == (fault.AttemptKey{}) {
		return ac.n
	}
	return ac.Context.Value(key)
}

// attemptRun is one attempt, on its own goroutine when it can be cut short:
// one allocation for its context, its answer and the hand-over of an
// abandoned attempt's end.
type attemptRun struct {
	ctx    attemptCtx
	cause  fault.LimitCause
	cancel context.CancelFunc // ends ctx: the tool's goroutine calls it once it has answered
	answer struct {
		out string
		err error
	}
	answered atomic.Bool // answer is set

	// returned and finish hand the end of an abandoned attempt over to its
	// goroutine: exactly one side sees the other's mark, so finish (the
	// AbandonedReturned observers, the layers' holds) runs once.
	mu       sync.Mutex
	returned bool
	notify   chan struct{} // closed when the tool returns, if set: the grace waits on it
	finish   func()
	gauge    *attemptGauge // the tool's attempts on goroutines
}

// attemptGauge counts one tool's attempts on goroutines of their own, and
// those among them that were abandoned.
type attemptGauge struct {
	running, stuck atomic.Int64
}

func (r *attemptRun) run(next tools.Tool, input string) {
	returned := false
	defer func() {
		// Deferred, so that a tool that ends its goroutine with
		// runtime.Goexit still answers and returns what it holds.
		if !returned {
			r.answer.out, r.answer.err = "", fault.Goexit
		}
		r.gauge.running.Add(-1)
		r.answered.Store(true)
		r.cancel() // wakes the caller, if it still waits
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
	r.answer.out, r.answer.err = next.Call(&r.ctx, input)
	returned = true
}

// waitOrAbandon waits up to AbandonGrace for the tool, whose context has
// ended, to return. If it does not, the attempt is abandoned: it is
// counted, and its goroutine releases the holds of ctx and records
// AbandonedReturned when the tool returns. It reports whether it abandoned
// the attempt.
func (r *attemptRun) waitOrAbandon(ctx context.Context, c *call.Call, attempt int, stuck *atomic.Int64) bool {
	// A tool that honours its context is runnable now: yield to it first,
	// then wait for it on a timer until the grace is over.
	start := time.Now()
	for time.Since(start) < yieldGrace {
		runtime.Gosched()
		if r.answered.Load() {
			return false
		}
	}
	r.mu.Lock()
	if !r.returned {
		r.notify = make(chan struct{})
		notify := r.notify
		r.mu.Unlock()
		t := time.NewTimer(AbandonGrace - time.Since(start))
		select {
		case <-notify:
		case <-t.C:
		}
		t.Stop()
		r.mu.Lock()
	}
	if r.returned {
		r.mu.Unlock()
		return false
	}
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
