package test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// The side-effect rules hold only in the composed stack: the
// guard inside the retry, and the call's idempotency key the same on every
// attempt. (The guard alone is tested in package middleware.)
func TestSideEffects(t *testing.T) {
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)})

	t.Run("with the idempotency key the upstream applies a side effect once across retries", func(t *testing.T) {
		t.Parallel()
		tool, srv, ledger := testkit.Refunds(t, true, retry, toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		// Applied, then the connection is reset: the answer is lost twice.
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset(), toolsafetest.ApplyThenReset())
		r := tool.Run(context.Background(), testkit.RefundInput)
		if r.Status() != "ok" || r.Attempts != 3 {
			t.Fatalf("%q after %d attempts (%s); want ok after 3", r.Status(), r.Attempts, r.Observation())
		}
		if srv.Requests(refunds.Path) != 3 || ledger.Applied() != 1 {
			t.Errorf("%d requests, %d refunds applied; want 3 and 1", srv.Requests(refunds.Path), ledger.Applied())
		}
		if !strings.Contains(r.Output, `"refund":"R-1"`) {
			t.Errorf("output %q; want the first (and only) refund", r.Output)
		}
	})

	t.Run("without the key the same faults apply it three times", func(t *testing.T) {
		t.Parallel()
		// The same tool, not marked: what the key and the mark prevent.
		tool, srv, ledger := testkit.Refunds(t, false, retry)
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset(), toolsafetest.ApplyThenReset())
		if r := tool.Run(context.Background(), testkit.RefundInput); r.Status() != "ok" || ledger.Applied() != 3 {
			t.Fatalf("%q with %d applied; want ok with 3", r.Status(), ledger.Applied())
		}
	})

	t.Run("without the key a side-effecting tool is not retried after a timeout", func(t *testing.T) {
		t.Parallel()
		tool, srv, _ := testkit.Refunds(t, false, retry,
			toolsafe.WithTimeout(50*time.Millisecond),
			toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		srv.Enqueue(refunds.Path, toolsafetest.Slow(time.Hour))
		r := tool.Run(context.Background(), testkit.RefundInput)
		f := r.Failure
		if f == nil || f.Kind != middleware.KindTimeout || r.Attempts != 1 || f.Retryable || f.SideEffect != middleware.SideEffectUnknown {
			t.Fatalf("got %+v; want tool-timeout after 1 attempt, not retryable, side effect unknown", r)
		}
		if want := "The action may have been applied; check before calling again."; !strings.Contains(r.Observation(), want) {
			t.Errorf("observation %q lacks %q", r.Observation(), want)
		}
		// At most one: under load the attempt's 50ms can run out before
		// its request even reaches the upstream; what matters is no retry.
		if n := srv.Requests(refunds.Path); n > 1 {
			t.Errorf("%d requests; want at most 1", n)
		}
	})

	t.Run("without the key a reset after the request was sent is not retried", func(t *testing.T) {
		t.Parallel()
		tool, srv, ledger := testkit.Refunds(t, false, retry, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset())
		r := tool.Run(context.Background(), testkit.RefundInput)
		if testkit.Kind(r) != middleware.KindFailed || r.Attempts != 1 || r.Failure.SideEffect != middleware.SideEffectUnknown {
			t.Fatalf("got %+v; want tool-failed after 1 attempt, side effect unknown", r)
		}
		if !strings.Contains(r.Observation(), "may have been applied") || ledger.Applied() != 1 {
			t.Errorf("observation %q, %d applied", r.Observation(), ledger.Applied())
		}
	})

	t.Run("without the key an answer that proves nothing was applied is retried", func(t *testing.T) {
		t.Parallel()
		tool, srv, ledger := testkit.Refunds(t, false, retry, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		srv.Enqueue(refunds.Path, toolsafetest.Unavailable(""), toolsafetest.TooMany("0"))
		r := tool.Run(context.Background(), testkit.RefundInput)
		if r.Status() != "ok" || r.Attempts != 3 || ledger.Applied() != 1 {
			t.Fatalf("%q after %d attempts, %d applied; want ok after 3, 1", r.Status(), r.Attempts, ledger.Applied())
		}
	})

	t.Run("with the key a failure whose outcome is unknown still says so", func(t *testing.T) {
		t.Parallel()
		tool, srv, _ := testkit.Refunds(t, true,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		// The first attempt may have landed; the second is refused outright.
		srv.Enqueue(refunds.Path, toolsafetest.ApplyThenReset(), toolsafetest.Unavailable(""))
		r := tool.Run(context.Background(), testkit.RefundInput)
		if testkit.Kind(r) != middleware.KindFailed || r.Attempts != 2 || r.Failure.SideEffect != middleware.SideEffectUnknown {
			t.Fatalf("got %+v; want tool-failed after 2, side effect unknown", r)
		}
	})
}
