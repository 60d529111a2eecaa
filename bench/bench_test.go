package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/run"

	retrygo "github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Every contender makes one logical call with up to maxRetries retries, a
// per-attempt timeout and no wait between attempts.
const (
	maxRetries     = 3
	attemptTimeout = 2 * time.Second
)

var errBusy = middleware.Transient(errors.New("busy"))

// tool answers "ok" after failing the first fails attempts of each call; the
// benchmark resets n before each call.
type tool struct {
	fails int
	n     int
}

func (t *tool) Name() string        { return "bench" }
func (t *tool) Description() string { return "benchmark tool" }
func (t *tool) Call(context.Context, string) (string, error) {
	t.n++
	if t.n <= t.fails {
		return "", errBusy
	}
	return "ok", nil
}

type runner func(ctx context.Context) (string, error)

// hardTimeout is what a careful user writes to make an attempt timeout
// hold when the tool ignores its context: the tool on a goroutine of its
// own, the caller back when the context ends.
func hardTimeout(ctx context.Context, t tools.Tool) (string, error) {
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := t.Call(actx, "x")
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-actx.Done():
		return "", actx.Err()
	}
}

func contenders(t tools.Tool) map[string]runner {
	fsExec := failsafe.With[string](
		retrypolicy.NewBuilder[string]().WithMaxRetries(maxRetries).Build(),
		timeout.New[string](attemptTimeout),
	)
	fsRetry := failsafe.With[string](retrypolicy.NewBuilder[string]().WithMaxRetries(maxRetries).Build())
	wrapped := toolsafe.Wrap(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
		toolsafe.WithTimeout(attemptTimeout))
	// In a run scoped with run.With, a tool with side effects: every call is
	// recorded in the run ledger, which it reads first (a run just begun).
	inRun := toolsafe.Wrap(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
		toolsafe.WithTimeout(attemptTimeout),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	ledger := run.NewMemoryLedger()
	// Without an attempt timeout (and a context that cannot end) there is
	// nothing to hand control back early for: no goroutine per attempt.
	untimed := toolsafe.Wrap(t, toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}))
	return map[string]runner{
		"direct": func(ctx context.Context) (string, error) {
			return t.Call(ctx, "x")
		},
		"failsafe": func(ctx context.Context) (string, error) {
			return fsExec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
				return t.Call(e.Context(), "x")
			})
		},
		"failsafe-retry": func(ctx context.Context) (string, error) {
			return fsRetry.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
				return t.Call(e.Context(), "x")
			})
		},
		"failsafe-hard": func(ctx context.Context) (string, error) {
			return fsRetry.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
				return hardTimeout(e.Context(), t)
			})
		},
		"toolsafe": func(ctx context.Context) (string, error) {
			return wrapped.Call(ctx, "x")
		},
		"toolsafe-run": func(ctx context.Context) (string, error) {
			return inRun.Call(run.With(ctx, "", ledger), "x")
		},
		"toolsafe-no-timeout": func(ctx context.Context) (string, error) {
			return untimed.Call(ctx, "x")
		},
		"handrolled": func(ctx context.Context) (string, error) {
			var err error
			for range maxRetries + 1 {
				actx, cancel := context.WithTimeout(ctx, attemptTimeout)
				var out string
				out, err = t.Call(actx, "x")
				cancel()
				if err == nil {
					return out, nil
				}
			}
			return "", err
		},
		"handrolled-hard": func(ctx context.Context) (string, error) {
			var err error
			for range maxRetries + 1 {
				var out string
				if out, err = hardTimeout(ctx, t); err == nil {
					return out, nil
				}
			}
			return "", err
		},
		"backoff": func(ctx context.Context) (string, error) {
			return backoff.Retry(ctx, func() (string, error) {
				actx, cancel := context.WithTimeout(ctx, attemptTimeout)
				defer cancel()
				return t.Call(actx, "x")
			}, backoff.WithBackOff(&backoff.ZeroBackOff{}), backoff.WithMaxTries(maxRetries+1))
		},
		"retrygo": func(ctx context.Context) (string, error) {
			return retrygo.DoWithData(func() (string, error) {
				actx, cancel := context.WithTimeout(ctx, attemptTimeout)
				defer cancel()
				return t.Call(actx, "x")
			}, retrygo.Attempts(maxRetries+1), retrygo.Delay(0), retrygo.DelayType(retrygo.FixedDelay),
				retrygo.Context(ctx), retrygo.LastErrorOnly(true))
		},
	}
}

// order is the order of the sub-benchmarks, so benchstat tables line up.
var order = []string{"direct", "failsafe", "failsafe-retry", "failsafe-hard", "toolsafe", "toolsafe-traced", "toolsafe-metered",
	"toolsafe-run", "toolsafe-no-timeout", "handrolled", "handrolled-hard", "backoff", "retrygo"}

func bench(b *testing.B, fails int) {
	tl := &tool{fails: fails}
	cs := contenders(tl)
	for name, r := range tracedContenders(tl) {
		cs[name] = r
	}
	ctx := context.Background()
	for _, name := range order {
		run, ok := cs[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tl.n = 0
				out, err := run(ctx)
				if name != "direct" && (err != nil || out != "ok") {
					b.Fatalf("%s: %q, %v", name, out, err)
				}
			}
		})
	}
}

// BenchmarkSuccess is one successful call, first attempt.
func BenchmarkSuccess(b *testing.B) { bench(b, 0) }

// BenchmarkRetries is three transient failures, then success, no waits.
func BenchmarkRetries(b *testing.B) { bench(b, maxRetries) }

// BenchmarkParallel is successful calls from every P at once through one
// circuit breaker and one bulkhead shared by all, as the tools of one
// dependency share them.
func BenchmarkParallel(b *testing.B) {
	breaker := policy.NewCircuitBreaker("bench", policy.Breaker{})
	bulkhead := policy.NewBulkhead("bench", 1024, time.Second)
	ok := middleware.Func("bench", "benchmark tool", func(context.Context, string) (string, error) { return "ok", nil })
	wrapped := toolsafe.Wrap(ok,
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
		toolsafe.WithTimeout(attemptTimeout),
		toolsafe.WithCircuitBreaker(breaker),
		toolsafe.WithBulkhead(bulkhead))
	b.Run("toolsafe", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				if out, err := wrapped.Call(ctx, "x"); err != nil || out != "ok" {
					b.Errorf("%q, %v", out, err)
					return
				}
			}
		})
	})
}
