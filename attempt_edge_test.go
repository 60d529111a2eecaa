package toolsafe_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

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
