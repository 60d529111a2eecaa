package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// onAbandonedDone tells done when an abandoned attempt's tool has returned
// (and so, when the bulkhead permit it kept is back).
func onAbandonedDone(done chan<- int) toolsafe.Option {
	return toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
				if r, ok := e.(call.AbandonedReturned); ok {
					done <- r.Attempt
				}
			}))
			return next.Call(ctx, input)
		})
	})
}

func TestBulkhead(t *testing.T) {
	t.Run("a full bulkhead refuses with tool-busy, not retried", func(t *testing.T) {
		t.Parallel()
		h := testkit.Hold(billing.Handler())
		srv := toolsafetest.NewUpstream(h)
		t.Cleanup(srv.Close)
		bh := policy.NewBulkhead("billing", 1, 0)
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithBulkhead(bh))
		first := make(chan middleware.Result, 1)
		go func() { first <- tool.Run(context.Background(), "INV-1001") }()
		<-h.Arrived

		r := tool.Run(context.Background(), "INV-1002")
		if testkit.Kind(r) != middleware.KindBusy || r.Attempts != 0 || r.Failure.Retryable {
			t.Fatalf("got %q after %d attempts; want tool-busy after 0, not retryable", testkit.Kind(r), r.Attempts)
		}
		if want := "fetch_invoice was not called: too many calls to its dependency billing are in flight."; !strings.HasPrefix(r.Observation(), want) {
			t.Errorf("observation %q; want it to start with %q", r.Observation(), want)
		}
		close(h.Release)
		if r := <-first; r.Status() != "ok" {
			t.Fatalf("the first call: %q", r.Status())
		}
		if srv.Requests("") != 1 {
			t.Errorf("upstream got %d requests; want 1", srv.Requests(""))
		}
		if r := tool.Run(context.Background(), "INV-1002"); r.Status() != "ok" {
			t.Errorf("after the first call returned its permit: %q; want ok", r.Status())
		}
	})

	t.Run("an abandoned attempt keeps its permit until the tool returns", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		returned := make(chan int, 1)
		bh := policy.NewBulkhead("slow", 1, 0)
		tool := toolsafe.Wrap(testkit.Stuck(release, nil),
			toolsafe.WithTimeout(10*time.Millisecond),
			toolsafe.WithBulkhead(bh),
			onAbandonedDone(returned))

		r := tool.Run(context.Background(), "x")
		if testkit.Kind(r) != middleware.KindTimeout || r.Abandoned != 1 {
			t.Fatalf("got %q with %d abandoned; want tool-timeout with 1", testkit.Kind(r), r.Abandoned)
		}
		// The timed-out tool still runs: its permit is still taken, and an
		// operator's gauge sees it.
		if bh.InUse() != 1 || bh.MaxConcurrent() != 1 {
			t.Fatalf("%d of %d permits in use; want 1 of 1, the abandoned attempt's", bh.InUse(), bh.MaxConcurrent())
		}
		for range 3 {
			if r := tool.Run(context.Background(), "x"); testkit.Kind(r) != middleware.KindBusy {
				t.Fatalf("got %q while the abandoned attempt runs; want tool-busy", testkit.Kind(r))
			}
		}
		close(release)
		<-returned
		r = tool.Run(context.Background(), "x")
		if testkit.Kind(r) == middleware.KindBusy || r.Status() != "ok" {
			t.Fatalf("got %q after the abandoned tool returned; want ok: the permit is back", testkit.Kind(r))
		}
		if bh.InUse() != 0 {
			t.Errorf("%d permits in use after every tool returned; want 0", bh.InUse())
		}
	})

	t.Run("a panic gives the permit back", func(t *testing.T) {
		t.Parallel()
		boom := middleware.Func("boom", "panics", func(context.Context, string) (string, error) { panic("boom") })
		bh := policy.NewBulkhead("boom", 1, 0)
		cb := policy.NewCircuitBreaker("boom", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
		for _, timeout := range []time.Duration{0, time.Second} { // with and without the attempt goroutine
			tool := toolsafe.Wrap(boom, toolsafe.WithTimeout(timeout), toolsafe.WithBulkhead(bh), toolsafe.WithCircuitBreaker(cb))
			for range 3 {
				if r := tool.Run(context.Background(), "x"); testkit.Kind(r) != middleware.KindPanic {
					t.Fatalf("timeout %v: got %q; want tool-panic every time, never tool-busy or circuit-open", timeout, testkit.Kind(r))
				}
			}
		}
		if !cb.IsClosed() || cb.Metrics().Executions() != 0 {
			t.Errorf("breaker %v with %d executions; want closed with 0: a panic is the tool's bug, not the dependency's", cb.State(), cb.Metrics().Executions())
		}
	})
}
