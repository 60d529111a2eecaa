package fallback_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// The fallback layer as toolsafe.Wrap places it: outside the retry and the
// breaker, inside the call's surface, with *toolsafe.Tool alternatives.
func TestFallback(t *testing.T) {
	t.Run("a tool-error routes to the alternative with adapted input", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		cache := toolsafe.Wrap(testkit.Counting("invoice_cache", &calls))
		tool, _ := testkit.Billing(t, toolsafe.WithFallback(fallback.To(cache,
			fallback.WithInput(func(_ context.Context, in string) (string, error) { return "cache:" + in, nil }))))
		r := tool.Run(context.Background(), "INV-9999") // 404: a tool-error
		if r.Status() != "ok" || r.Fallback != "invoice_cache" || r.Output != "cached: cache:INV-9999" || r.Attempts != 1 {
			t.Fatalf("got %+v; want ok from invoice_cache with the adapted input after 1 attempt", r)
		}
		if !strings.HasPrefix(r.Observation(), "(fetch_invoice could not answer, so its fallback tool invoice_cache did") {
			t.Errorf("observation %q does not say the answer came from the fallback", r.Observation())
		}
	})

	t.Run("an open circuit routes to the alternative", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{Delay: time.Hour})
		cb.Open()
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Counting("invoice_cache", &calls)))))
		if r := tool.Run(context.Background(), "INV-1001"); r.Status() != "ok" || r.Fallback != "invoice_cache" || srv.Requests("") != 0 {
			t.Fatalf("got %q from %q with %d requests; want ok from invoice_cache with none", r.Status(), r.Fallback, srv.Requests(""))
		}
	})

	t.Run("it never runs on a pause", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		tool, _ := testkit.Billing(t,
			toolsafe.WithApproval(approval.NewGrants()),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Counting("invoice_cache", &calls)))))
		_, err := tool.Call(context.Background(), "INV-1001")
		if ar := testkit.Paused(t, err); ar.Tool != "fetch_invoice" || calls.Load() != 0 {
			t.Errorf("paused %q, alternative called %d times; want fetch_invoice and 0", ar.Tool, calls.Load())
		}
	})

	t.Run("it never runs on a cancellation", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		h := testkit.Hold(billing.Handler())
		srv := toolsafetest.NewUpstream(h)
		t.Cleanup(srv.Close)
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
			toolsafe.WithTimeout(time.Hour),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Counting("invoice_cache", &calls)))))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { <-h.Arrived; cancel() }()
		_, err := tool.Call(ctx, "INV-1001")
		if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
			t.Errorf("err %v, alternative called %d times; want context.Canceled and 0", err, calls.Load())
		}
	})

	t.Run("its alternative passes the approval gate: a destructive alternative without a grant pauses", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		grants := approval.NewGrants()
		credit := toolsafe.Wrap(testkit.Counting("issue_credit", &calls), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
		tool, srv := testkit.Billing(t, toolsafe.WithFallback(fallback.To(credit)))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())

		_, err := tool.Call(context.Background(), "INV-1001")
		ar := testkit.Paused(t, err)
		if ar.Tool != "issue_credit" || ar.Input != "INV-1001" || calls.Load() != 0 {
			t.Fatalf("paused %+v, alternative ran %d times; want issue_credit paused, never run", ar, calls.Load())
		}
		if r := tool.Run(context.Background(), "INV-1001"); r.Status() != "paused" {
			t.Fatalf("status %q; want paused", r.Status())
		}
		grants.Grant("issue_credit", "INV-1001")
		if r := tool.Run(context.Background(), "INV-1001"); r.Status() != "ok" || r.Fallback != "issue_credit" || calls.Load() != 1 {
			t.Fatalf("granted: %q from %q, ran %d times; want ok from issue_credit, once", r.Status(), r.Fallback, calls.Load())
		}
	})

	t.Run("when the alternative fails too the model sees both failures", func(t *testing.T) {
		t.Parallel()
		archiveSrv := toolsafetest.NewUpstream(billing.Handler())
		t.Cleanup(archiveSrv.Close)
		archiveSrv.Always("", toolsafetest.Unavailable(""))
		archive := middleware.Func("invoice_archive", "old invoices", billing.FetchInvoice(archiveSrv.URL(), toolsafetest.NoKeepAliveClient()).Call)
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(archive,
				toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)})))))
		srv.Always("", toolsafetest.Reset())
		r := tool.Run(context.Background(), "INV-1001")
		f := r.Failure
		if f == nil || f.Kind != middleware.KindFailed || r.Attempts != 2 || f.FallbackFailure == nil || f.FallbackFailure.Attempts != 3 {
			t.Fatalf("got %+v; want the primary's tool-failed after 2 attempts and the alternative's after 3", r)
		}
		msg := r.Observation()
		for _, want := range []string{"fetch_invoice failed (the connection was reset) after 2 attempts",
			"The fallback tool invoice_archive was tried instead and failed too: invoice_archive failed (HTTP 503 Service Unavailable) after 3 attempts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if archiveSrv.Requests("") != 3 {
			t.Errorf("the archive got %d requests; want 3", archiveSrv.Requests(""))
		}
	})

	t.Run("kinds that never fall back are configuration errors", func(t *testing.T) {
		t.Parallel()
		_, err := toolsafe.New(testkit.Counting("a", new(atomic.Int32)),
			toolsafe.WithFallback(fallback.To(testkit.Counting("b", new(atomic.Int32)), fallback.On(middleware.KindFailed, middleware.KindApprovalRequired))))
		if err == nil || !strings.Contains(err.Error(), "approval-required is never routed to a fallback") {
			t.Errorf("err = %v", err)
		}
		if _, err := toolsafe.New(testkit.Counting("a", new(atomic.Int32)), toolsafe.WithFallback(fallback.To(nil))); err == nil {
			t.Error("a nil alternative was accepted")
		}
	})

	t.Run("On narrows the kinds that route", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		tool, _ := testkit.Billing(t, toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Counting("invoice_cache", &calls)), fallback.On(middleware.KindFailed))))
		if r := tool.Run(context.Background(), "INV-9999"); testkit.Kind(r) != middleware.KindToolError || calls.Load() != 0 {
			t.Errorf("got %q with %d fallback calls; want the tool-error and none", testkit.Kind(r), calls.Load())
		}
	})
}
