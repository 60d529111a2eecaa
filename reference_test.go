package toolsafe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/billing"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// referenceTool is the fetch_invoice tool of DESIGN.md §5 on a real flaky
// upstream: 3 retries, a 2 s attempt timeout and a backoff without jitter.
func referenceTool(t *testing.T) (*toolsafe.Tool, *toolsafetest.Upstream) {
	t.Helper()
	srv := toolsafetest.NewUpstream(billing.Handler())
	t.Cleanup(srv.Close)
	// No keep-alive: net/http silently resends a GET whose reused connection
	// was reset, which would hide attempts from the count.
	client := toolsafetest.NoKeepAliveClient()
	tool, err := toolsafe.New(billing.FetchInvoice(srv.URL(), client),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
			Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25,
			Rand: func() float64 { return 0 },
		}}),
		toolsafe.WithTimeout(2*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	return tool, srv
}

func TestReferenceScenario(t *testing.T) {
	t.Run("three transient failures then success is ok after 4 attempts", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		path := billing.InvoicePath("INV-1001")
		// A connection reset, "billing API busy" (503, transient), a reset.
		srv.Enqueue(path, toolsafetest.Reset(), toolsafetest.Unavailable(""), toolsafetest.Reset())

		r := tool.Run(context.Background(), `{"number":"INV-1001"}`)

		if r.Status() != "ok" || r.Attempts != 4 {
			t.Fatalf("status %q after %d attempts (%v); want ok after 4", r.Status(), r.Attempts, r.Failure)
		}
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
		if !slices.Equal(r.Delays, want) {
			t.Errorf("delays %v; want %v", r.Delays, want)
		}
		if !strings.Contains(r.Observation(), "Acme Corp") {
			t.Errorf("observation %q lacks the invoice", r.Observation())
		}
		if got := srv.Requests(path); got != 4 {
			t.Errorf("upstream got %d requests; want 4", got)
		}
	})

	t.Run("a malformed number is a tool-error after 1 attempt", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		r := tool.Run(context.Background(), `{"number":"7"}`)
		if r.Failure == nil || r.Failure.Kind != middleware.KindToolError || r.Attempts != 1 {
			t.Fatalf("got %+v; want tool-error after 1 attempt", r)
		}
		if r.Failure.Retryable {
			t.Error("a tool-error must not be retryable")
		}
		if !strings.Contains(r.Observation(), "INV-1001") {
			t.Errorf("the model is not told how numbers look: %q", r.Observation())
		}
		if srv.Requests("") != 0 {
			t.Errorf("a malformed number reached the upstream")
		}
	})

	t.Run("an upstream that never recovers is tool-failed after 4 attempts", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		srv.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())

		r := tool.Run(context.Background(), `{"number":"INV-1002"}`)

		f := r.Failure
		if f == nil || f.Kind != middleware.KindFailed || r.Attempts != 4 || f.Attempts != 4 {
			t.Fatalf("got %+v (%v); want tool-failed after 4 attempts", r, f)
		}
		if f.Retryable {
			t.Error("after exhaustion Retryable must be false")
		}
		msg := r.Observation()
		for _, want := range []string{"fetch_invoice", "4 attempts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if strings.Contains(msg, "reset by peer") || strings.Contains(msg, "127.0.0.1") {
			t.Errorf("message leaks the raw error: %q", msg)
		}
		if !strings.Contains(f.Cause.Error(), "reset by peer") {
			t.Errorf("the raw cause is not kept for logs: %v", f.Cause)
		}
		if !errors.Is(f, f.Cause) {
			t.Error("Failure does not unwrap to its cause")
		}
		// The langchaingo contract: the message is the observation, no error.
		out, err := tool.Call(context.Background(), `{"number":"INV-1002"}`)
		if err != nil || !strings.Contains(out, "fetch_invoice failed") || !strings.Contains(out, "4 attempts") {
			t.Errorf("Call = %q, %v; want the message and a nil error", out, err)
		}
	})
}
