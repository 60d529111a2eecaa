package layer

import (
	"context"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
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
// context returns within it and is not counted; only one that ignores its
// context is. For an attempt limit of 4 AbandonGrace or more the grace is
// counted inside the limit: the tool's context ends AbandonGrace before it,
// so the caller has control back at the limit (2s gives the tool's context
// 1.999s). For a shorter limit, and when the caller's context or the call's
// deadline ends first, the grace comes after.
const AbandonGrace = time.Millisecond

// graceInside is how much of the attempt limit d is its grace: the tool's
// context ends that long before d.
func graceInside(d time.Duration) time.Duration {
	if d >= 4*AbandonGrace {
		return AbandonGrace
	}
	return 0
}

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
// a cause that says which (see HowEnded): by its own limit, mostly
// AbandonGrace before d, so that the caller has control back at d (see
// AbandonGrace). A
// tool that returns within the grace is waited for; one that ignores it is
// abandoned: it
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
					return "", errStuck
				case running > 16*int64(cfg.maxAbandoned):
					g.running.Add(-1)
					return "", errTooMany
				}
			}
			c := call.From(ctx)
			n := c.BeginAttempt()
			if cfg.hook != nil {
				hctx, end := cfg.hook.Begin(ctx, n)
				out, abandoned, err := g.attempt(hctx, c, n, d, onGoroutine, next, input)
				end.End(err, abandoned)
				return out, err
			}
			out, _, err := g.attempt(ctx, c, n, d, onGoroutine, next, input)
			return out, err
		})
	}
}
