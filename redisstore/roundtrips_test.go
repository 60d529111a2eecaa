package redisstore_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// roundTrips counts what a client sends Redis, a round trip at a time: one
// command, or one pipeline. Only what is sent while on is set counts.
type roundTrips struct {
	mu    sync.Mutex
	on    bool
	n     int
	names map[string]int
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.count(cmd.FullName())
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.count("pipeline")
		return next(ctx, cmds)
	}
}

func (r *roundTrips) count(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.n++
		r.names[name]++
	}
}

func (r *roundTrips) set(on bool) (int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = on
	n, names := r.n, r.names
	r.n, r.names = 0, map[string]int{}
	return n, names
}

// TestRoundTripsPerFailedAttempt counts the round trips to Redis of calls
// whose every attempt fails, through a shared breaker that stays closed:
// at most one per failed attempt (the breaker's script). A shared retry
// budget adds its own script before each retry.
func TestRoundTripsPerFailedAttempt(t *testing.T) {
	for _, withBudget := range []bool{false, true} {
		name := "a shared breaker"
		if withBudget {
			name += " and a shared retry budget"
		}
		t.Run(name, func(t *testing.T) {
			rt := &roundTrips{names: map[string]int{}}
			c := newClient(t, redisAddr)
			c.AddHook(rt)
			prefix := redistest.Prefix(t.Name())
			// A closed breaker's state is refreshed in the background once it
			// is half its max age old (WithStateMaxAge, 1s by default), and
			// asked again at its max age: a stall of the busy machine after
			// the warm-up made that refresh (a script, and the connection it
			// dialed) fall in the loop. They are time's round trips, not the
			// attempts': a max age longer than the test keeps them out.
			s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithStateMaxAge(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			t.Cleanup(func() { redistest.CheckTTLs(t, newClient(t, redisAddr), prefix) })
			cb, err := s.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			retry := policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0)}
			if withBudget {
				if retry.Shared, err = s.RetryBudget("billing", 1); err != nil {
					t.Fatal(err)
				}
			}
			reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")}
			tool := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
				return "", reset
			})
			w, err := toolsafe.New(tool, toolsafe.WithRetry(retry), toolsafe.WithCircuitBreaker(cb))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			w.Run(ctx, "INV-1") // the breaker's first state, the scripts loaded
			const calls = 20
			rt.set(true)
			attempts, retries := 0, 0
			began := time.Now()
			for range calls {
				r := w.Run(ctx, "INV-1")
				if r.Kind() != middleware.KindFailed {
					t.Fatalf("kind %v; want tool-failed", r.Kind())
				}
				attempts += r.Attempts
				if withBudget {
					retries += r.Attempts - 1
				}
			}
			n, names := rt.set(false)
			// A first attempt sends the budget's counts itself when no retry
			// carried them for 100ms (RetryBudget's documented cadence): a
			// stall of the busy machine between two calls' attempts is one
			// such send, and never more than one per 100ms of the loop.
			flushes := 0
			if withBudget {
				flushes = int(time.Since(began) / (100 * time.Millisecond))
			}
			t.Logf("%d round trips for %d failed attempts, %d of them retries, in %v: %v", n, attempts, retries, time.Since(began), names)
			if n > attempts+retries+flushes {
				t.Errorf("%d round trips for %d failed attempts, %d retries (%v); want at most one each, one more per retry for the budget, and %d time-driven sends of its first attempts",
					n, attempts, retries, names, flushes)
			}
		})
	}
}
