package layer_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func TestTimeouts(t *testing.T) {
	t.Run("a tool that ignores its context times out on every attempt", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release) // goleak in TestMain proves the abandoned attempts end
		tool := toolsafe.Wrap(testkit.Stuck(release, nil),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithTimeout(20*time.Millisecond))
		r := tool.Run(context.Background(), "x")
		f := r.Failure
		if f == nil || f.Kind != middleware.KindTimeout || r.Attempts != 3 || f.Retryable {
			t.Fatalf("got %v after %d attempts; want a final tool-timeout after 3", f, r.Attempts)
		}
		if r.Abandoned != 3 {
			t.Errorf("abandoned %d; want 3", r.Abandoned)
		}
		if f.Timeout != 20*time.Millisecond || !strings.Contains(r.Observation(), "did not answer within 20ms") {
			t.Errorf("timeout %v, message %q", f.Timeout, r.Observation())
		}
	})
	t.Run("a cooperative tool that gives up at its deadline is a timeout too", func(t *testing.T) {
		srv := toolsafetest.NewUpstream(billing.Handler())
		defer srv.Close()
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Hang())
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1}),
			toolsafe.WithTimeout(30*time.Millisecond))
		r := tool.Run(context.Background(), "INV-1001")
		if r.Failure == nil || r.Failure.Kind != middleware.KindTimeout || r.Attempts != 2 {
			t.Fatalf("got %v after %d attempts; want tool-timeout after 2", r.Failure, r.Attempts)
		}
		if srv.Requests("") != 2 {
			t.Errorf("upstream saw %d requests; want 2", srv.Requests(""))
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Run("cancelling during an attempt of a tool that ignores its context returns at once", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		calls := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-calls; cancel() }()
		r := toolsafe.Wrap(testkit.Stuck(release, calls), toolsafe.WithRetry(policy.Retry{MaxRetries: 3})).Run(ctx, "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindCanceled || r.Status() != "error" || r.Observation() != "" {
			t.Fatalf("got %+v; want canceled with no observation", r)
		}
		if r.Attempts != 1 || r.Abandoned != 1 {
			t.Errorf("attempts %d abandoned %d; want 1 and 1", r.Attempts, r.Abandoned)
		}
	})
}

// Regression (fresh-eyes review): a call whose context had already ended
// still ran the tool and threw the answer away.
func TestACancelledCallStartsNoAttempt(t *testing.T) {
	var ran atomic.Int32
	tool := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
		ran.Add(1)
		return "refunded", nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := toolsafe.Wrap(tool, toolsafe.WithTimeout(time.Second), toolsafe.WithRetry(policy.Retry{MaxRetries: 2}))
	for range 20 {
		r := w.Run(ctx, "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindCanceled || r.Attempts != 0 {
			t.Fatalf("got %v after %d attempts; want canceled after none", r.Failure, r.Attempts)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the tool ran %d times for a caller that had gone", n)
	}
}

// Regression (fresh-eyes review): a tool that ended its goroutine with
// runtime.Goexit (t.FailNow in a test double) kept its bulkhead permit for
// good, and every later call was refused as tool-busy.
func TestGoexitReturnsTheBulkheadPermit(t *testing.T) {
	b := policy.NewBulkhead("dep", 1, 0)
	tool := middleware.Func("g", "exits", func(_ context.Context, in string) (string, error) {
		if in == "exit" {
			runtime.Goexit()
		}
		return "ok", nil
	})
	w := toolsafe.Wrap(tool, toolsafe.WithTimeout(time.Minute), toolsafe.WithBulkhead(b))
	r := w.Run(context.Background(), "exit")
	if r.Failure == nil || r.Failure.Kind != middleware.KindPanic {
		t.Fatalf("got %v; want tool-panic", r.Failure)
	}
	if r := w.Run(context.Background(), "fine"); r.Failure != nil || r.Output != "ok" {
		t.Errorf("the next call: %v %q; want ok", r.Failure, r.Observation())
	}
}

func TestTheAttemptsContext(t *testing.T) {
	t.Run("it reports the attempt's deadline, the grace before the limit", func(t *testing.T) {
		var left time.Duration
		tool := middleware.Func("d", "", func(ctx context.Context, _ string) (string, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				return "", errors.New("no deadline")
			}
			left = time.Until(dl)
			return "ok", nil
		})
		const limit = time.Hour
		if r := toolsafe.Wrap(tool, toolsafe.WithTimeout(limit)).Run(context.Background(), "x"); r.Failure != nil {
			t.Fatal(r.Failure)
		}
		if left > limit-layer.AbandonGrace || left < limit-time.Minute {
			t.Errorf("the deadline is %v away; want just under %v", left, limit-layer.AbandonGrace)
		}
	})
	// In a synctest bubble, so that a busy machine cannot make the tool,
	// woken by its context, miss the grace and look abandoned.
	t.Run("its own limit ends it with DeadlineExceeded and the attempt timeout as cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			type seen struct {
				err   error
				ended call.Ended
			}
			got := make(chan seen, 1)
			tool := middleware.Func("d", "", func(ctx context.Context, _ string) (string, error) {
				<-ctx.Done()
				got <- seen{ctx.Err(), call.HowEnded(ctx)}
				return "", ctx.Err()
			})
			r := toolsafe.Wrap(tool, toolsafe.WithTimeout(10*time.Millisecond)).Run(context.Background(), "x")
			if r.Kind() != middleware.KindTimeout || r.Abandoned != 0 {
				t.Fatalf("kind %v, abandoned %d; want tool-timeout, 0", r.Kind(), r.Abandoned)
			}
			if s := <-got; !errors.Is(s.err, context.DeadlineExceeded) || s.ended != call.ByAttemptTimeout {
				t.Errorf("the tool saw %v, ended %v; want context.DeadlineExceeded by the attempt timeout", s.err, s.ended)
			}
		})
	})
	t.Run("it is canceled once the attempt is over, Done asked for or not", func(t *testing.T) {
		for _, askDone := range []bool{false, true} {
			var kept context.Context
			tool := middleware.Func("d", "", func(ctx context.Context, _ string) (string, error) {
				if askDone {
					_ = ctx.Done()
				}
				kept = ctx
				return "ok", nil
			})
			w := toolsafe.Wrap(tool, toolsafe.WithTimeout(time.Hour))
			for range 3 { // a reused goroutine, too
				if r := w.Run(context.Background(), "x"); r.Failure != nil {
					t.Fatal(r.Failure)
				}
				<-kept.Done()
				if !errors.Is(kept.Err(), context.Canceled) || call.HowEnded(kept) == call.ByAttemptTimeout {
					t.Errorf("asked for Done %v: after the attempt its context says %v", askDone, kept.Err())
				}
			}
		}
	})
}

// Regression (a test of the suite hung in a testing/synctest bubble once
// attempts ran on pooled goroutines): a worker kept from an attempt outside
// the bubble cannot wait on the bubble's timers, so the attempt's timeout
// never came. Inside a bubble every attempt gets a goroutine of its own.
func TestAnAttemptInASynctestBubbleTimesOut(t *testing.T) {
	warm := layer.AttemptTimeout(time.Second)(middleware.Func("warm", "", func(context.Context, string) (string, error) { return "ok", nil }))
	if _, err := warm.Call(context.Background(), "x"); err != nil { // leaves an idle worker behind
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		tool := layer.AttemptTimeout(time.Minute)(middleware.Func("prompt", "", func(ctx context.Context, _ string) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}))
		_, err := tool.Call(context.Background(), "x")
		if kind, _ := middleware.Classify(err); kind != middleware.KindTimeout {
			t.Errorf("kind %v (%v); want tool-timeout after the bubble's minute", kind, err)
		}
	})
}
