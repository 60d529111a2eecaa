package policy_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// onRetry adds an observer to every call of the tool.
func onRetry(f func(ctx context.Context, attempt int, delay time.Duration)) toolsafe.Option {
	return toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
				if r, ok := e.(call.RetryScheduled); ok {
					f(ctx, r.Attempt, r.Delay)
				}
			}))
			return next.Call(ctx, input)
		})
	})
}

func TestHTTPStatusesThroughARealUpstream(t *testing.T) {
	const secret = "stack trace: pq: password authentication failed for user billing"
	tests := []struct {
		name     string
		steps    []toolsafetest.Step
		kind     middleware.Kind // "" for ok
		attempts int
	}{
		{"429 then 200 is ok after 2 attempts", []toolsafetest.Step{toolsafetest.TooMany("0")}, "", 2},
		{"503 twice then 200 is ok after 3 attempts", []toolsafetest.Step{toolsafetest.Unavailable(""), toolsafetest.Unavailable("")}, "", 3},
		{"500, 502, 504 then 200 is ok after 4 attempts", []toolsafetest.Step{toolsafetest.Respond(500, secret), toolsafetest.Respond(502, secret), toolsafetest.Respond(504, secret)}, "", 4},
		{"a reset then 200 is ok after 2 attempts", []toolsafetest.Step{toolsafetest.Reset()}, "", 2},
		{"400 is a tool-error after 1 attempt", []toolsafetest.Step{toolsafetest.Respond(400, secret)}, middleware.KindToolError, 1},
		{"422 is a tool-error after 1 attempt", []toolsafetest.Step{toolsafetest.Respond(422, secret)}, middleware.KindToolError, 1},
		{"500 four times is tool-failed after 4 attempts", slices.Repeat([]toolsafetest.Step{toolsafetest.Respond(500, secret)}, 4), middleware.KindFailed, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool, srv := testkit.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)}))
			srv.Enqueue(billing.InvoicePath("INV-1003"), tt.steps...)
			r := tool.Run(context.Background(), "INV-1003")
			var kind middleware.Kind
			if r.Failure != nil {
				kind = r.Failure.Kind
			}
			if kind != tt.kind || r.Attempts != tt.attempts {
				t.Fatalf("kind %q after %d attempts; want %q after %d (%s)", kind, r.Attempts, tt.kind, tt.attempts, r.Observation())
			}
			if strings.Contains(r.Observation(), "password") {
				t.Errorf("an upstream body reached the model: %q", r.Observation())
			}
		})
	}
	t.Run("404 is the tool's own tool-error", func(t *testing.T) {
		tool, _ := testkit.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 3}))
		r := tool.Run(context.Background(), `{"number":"INV-9999"}`)
		if r.Failure == nil || r.Failure.Kind != middleware.KindToolError || r.Attempts != 1 {
			t.Fatalf("got %v after %d attempts; want tool-error after 1", r.Failure, r.Attempts)
		}
		if want := "invoice INV-9999 does not exist; check the number with the user."; r.Observation() != want {
			t.Errorf("observation %q; want %q", r.Observation(), want)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	t.Run("delay-seconds is waited for even when the backoff is shorter", func(t *testing.T) {
		t.Parallel()
		tool, srv := testkit.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(10 * time.Millisecond)}))
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.TooMany("1"))
		r := tool.Run(context.Background(), "INV-1001")
		if r.Status() != "ok" || !slices.Equal(r.Delays, []time.Duration{time.Second}) {
			t.Fatalf("status %q delays %v; want ok after a 1s wait", r.Status(), r.Delays)
		}
	})
	t.Run("an HTTP-date is waited for", func(t *testing.T) {
		t.Parallel()
		tool, srv := testkit.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}))
		date := time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
		due, _ := http.ParseTime(date)
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Unavailable(date))
		r := tool.Run(context.Background(), "INV-1001")
		// HTTP-dates have whole seconds, so the wait is up to 2s; the retry
		// came once the date had passed, however late (a busy machine can
		// only make it later).
		if r.Status() != "ok" || len(r.Delays) != 1 || r.Delays[0] > 2*time.Second || time.Now().Before(due) {
			t.Fatalf("status %q delays %v, back before %v; want ok after a wait until the date", r.Status(), r.Delays, due)
		}
	})
	t.Run("a wait longer than the deadline ends the call now and says how long", func(t *testing.T) {
		t.Parallel()
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithDeadline(5*time.Second))
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.TooMany("120"))
		r := tool.Run(context.Background(), "INV-1001")
		f := r.Failure
		if f == nil || f.Kind != middleware.KindFailed || r.Attempts != 1 || len(r.Delays) != 0 {
			t.Fatalf("got %v after %d attempts, delays %v; want tool-failed after 1 and no wait", f, r.Attempts, r.Delays)
		}
		if f.Wait != 2*time.Minute || f.Retryable {
			t.Errorf("wait %v retryable %v; want 2m0s, false", f.Wait, f.Retryable)
		}
		if !strings.Contains(r.Observation(), "Wait at least 2m0s") {
			t.Errorf("the model is not told how long to wait: %q", r.Observation())
		}
	})
	t.Run("a backoff that would end after the deadline is not scheduled", func(t *testing.T) {
		t.Parallel()
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Hour), MaxWait: 2 * time.Hour}),
			toolsafe.WithDeadline(5*time.Second))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		r := tool.Run(context.Background(), "INV-1001")
		if r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Attempts != 1 || len(r.Delays) != 0 || r.Failure.Retryable {
			t.Fatalf("got %v after %d attempts, delays %v; want a final tool-failed after 1", r.Failure, r.Attempts, r.Delays)
		}
	})
	t.Run("MaxDuration caps the retrying like a deadline", func(t *testing.T) {
		t.Parallel()
		tool, srv := testkit.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 5, Backoff: testkit.Backoff(time.Minute), MaxDuration: time.Second}))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		r := tool.Run(context.Background(), "INV-1001")
		if r.Attempts != 1 || len(r.Delays) != 0 {
			t.Fatalf("%d attempts, delays %v; want 1 and none", r.Attempts, r.Delays)
		}
	})
}

// Regression (fresh-eyes review): without a deadline, Retry-After: 86400
// made the call sleep a day.
func TestARetryAfterLongerThanMaxWaitEndsTheCallNow(t *testing.T) {
	for _, tt := range []struct {
		name    string
		maxWait time.Duration
		header  string
		want    time.Duration
	}{
		{"a day, with the default max wait of a minute", 0, "86400", 24 * time.Hour},
		{"ten seconds, with a max wait of five", 5 * time.Second, "10", 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, srv := testkit.Billing(t, toolsafe.WithTimeout(time.Second),
				toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond), MaxWait: tt.maxWait}))
			srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.TooMany(tt.header))
			r := tool.Run(context.Background(), "INV-1001")
			if r.Failure == nil || r.Failure.Wait != tt.want || r.Attempts != 1 || len(r.Delays) != 0 {
				t.Fatalf("got %+v after %d attempts, delays %v; want a stop after 1 with wait %v",
					r.Failure, r.Attempts, r.Delays, tt.want)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	t.Run("cancelling while waiting between attempts returns at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The wait is an hour: only the cancellation can end it.
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Hour), MaxWait: 2 * time.Hour}),
			onRetry(func(context.Context, int, time.Duration) { cancel() }))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		out, err := tool.Call(ctx, "INV-1001")
		if !errors.Is(err, context.Canceled) || out != "" {
			t.Fatalf("Call = %q, %v; want \"\", context.Canceled", out, err)
		}
		if srv.Requests("") != 1 {
			t.Errorf("upstream got %d requests; want 1", srv.Requests(""))
		}
	})
}

// Regression (code review): an answer that settles the call, returned as
// the call's time ran out, was replaced by the context's error and then
// relabelled tool-timeout: a pause did not pause, and a semantic error
// became "did not answer". The two layers that decide it, the retry and
// Deadline, are tested directly, since only they see that moment: the retry
// here, Deadline in package middleware.
func TestAnAnswerAsTheRetrysContextEndsKeepsItsKind(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind middleware.Kind
	}{
		{"a pause", &approval.Required{Tool: "refund", Reason: "a person must approve"}, middleware.KindApprovalRequired},
		{"a semantic error", middleware.NewToolError("order A-1 does not exist"), middleware.KindToolError},
		{"a panic", &middleware.Failure{Kind: middleware.KindPanic, Tool: "refund"}, middleware.KindPanic},
	}
	for _, tt := range tests {
		t.Run(tt.name+" as the retry's context ends", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			answersAsItEnds := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
				cancel()
				return "", tt.err
			})
			mw, err := policy.Middleware(&policy.Retry{MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			_, err = mw(answersAsItEnds).Call(ctx, "x")
			if !errors.Is(err, tt.err) {
				t.Errorf("got %v; want %v", err, tt.err)
			}
		})
	}
}
