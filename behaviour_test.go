package toolsafe_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/billing"
	"github.com/toolsafe/toolsafe/internal/fixture"
	"github.com/toolsafe/toolsafe/internal/stub"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// onRetry adds an observer to every call of the tool.
func onRetry(f func(ctx context.Context, attempt int, delay time.Duration)) toolsafe.Option {
	return toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			middleware.Observe(ctx, middleware.ObserverFunc(func(e middleware.Event) {
				if r, ok := e.(middleware.RetryScheduled); ok {
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
			tool, srv := fixture.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: fixture.Backoff(time.Millisecond)}))
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
		tool, _ := fixture.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 3}))
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
		tool, srv := fixture.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: fixture.Backoff(10 * time.Millisecond)}))
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.TooMany("1"))
		r := tool.Run(context.Background(), "INV-1001")
		if r.Status() != "ok" || !slices.Equal(r.Delays, []time.Duration{time.Second}) {
			t.Fatalf("status %q delays %v; want ok after a 1s wait", r.Status(), r.Delays)
		}
	})
	t.Run("an HTTP-date is waited for", func(t *testing.T) {
		t.Parallel()
		tool, srv := fixture.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: fixture.Backoff(time.Millisecond)}))
		date := time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Unavailable(date))
		r := tool.Run(context.Background(), "INV-1001")
		// HTTP-dates have whole seconds: the wait is between 1s and 2s.
		if r.Status() != "ok" || len(r.Delays) != 1 || r.Delays[0] < time.Second || r.Delays[0] > 2*time.Second {
			t.Fatalf("status %q delays %v; want ok after a wait of 1s..2s", r.Status(), r.Delays)
		}
	})
	t.Run("a wait longer than the deadline ends the call now and says how long", func(t *testing.T) {
		t.Parallel()
		tool, srv := fixture.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: fixture.Backoff(time.Millisecond)}),
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
		tool, srv := fixture.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: fixture.Backoff(time.Hour), MaxWait: 2 * time.Hour}),
			toolsafe.WithDeadline(5*time.Second))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		r := tool.Run(context.Background(), "INV-1001")
		if r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Attempts != 1 || len(r.Delays) != 0 || r.Failure.Retryable {
			t.Fatalf("got %v after %d attempts, delays %v; want a final tool-failed after 1", r.Failure, r.Attempts, r.Delays)
		}
	})
	t.Run("MaxDuration caps the retrying like a deadline", func(t *testing.T) {
		t.Parallel()
		tool, srv := fixture.Billing(t, toolsafe.WithRetry(policy.Retry{MaxRetries: 5, Backoff: fixture.Backoff(time.Minute), MaxDuration: time.Second}))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		r := tool.Run(context.Background(), "INV-1001")
		if r.Attempts != 1 || len(r.Delays) != 0 {
			t.Fatalf("%d attempts, delays %v; want 1 and none", r.Attempts, r.Delays)
		}
	})
}

func TestTimeouts(t *testing.T) {
	t.Run("a tool that ignores its context times out on every attempt", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release) // goleak in TestMain proves the abandoned attempts end
		tool := toolsafe.Wrap(stub.Stuck(release, nil),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: fixture.Backoff(time.Millisecond)}),
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
	t.Run("the deadline holds a tool that ignores its context and has no attempt timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		tool := toolsafe.Wrap(stub.Stuck(release, nil),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2}),
			toolsafe.WithDeadline(30*time.Millisecond))
		r := tool.Run(context.Background(), "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindTimeout || r.Failure.Timeout != 30*time.Millisecond || r.Attempts != 1 {
			t.Fatalf("got %v after %d attempts; want tool-timeout of the 30ms deadline after 1", r.Failure, r.Attempts)
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

func TestPanic(t *testing.T) {
	boom := middleware.Func("boom", "panics", func(context.Context, string) (string, error) {
		panic("secret-token-123 in a panic")
	})
	tool := toolsafe.Wrap(boom,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3}),
		toolsafe.WithTimeout(time.Second))
	r := tool.Run(context.Background(), "x")
	if r.Failure == nil || r.Failure.Kind != middleware.KindPanic || r.Attempts != 1 || r.Failure.Retryable {
		t.Fatalf("got %v after %d attempts; want tool-panic after 1", r.Failure, r.Attempts)
	}
	if strings.Contains(r.Observation(), "secret-token") {
		t.Errorf("the panic value reached the model: %q", r.Observation())
	}
	t.Run("without any timeout the panic is recovered too", func(t *testing.T) {
		r := toolsafe.Wrap(boom).Run(context.Background(), "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindPanic {
			t.Fatalf("got %v; want tool-panic", r.Failure)
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Run("cancelling while waiting between attempts returns at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The wait is an hour: only the cancellation can end it.
		tool, srv := fixture.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: fixture.Backoff(time.Hour), MaxWait: 2 * time.Hour}),
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
	t.Run("cancelling during an attempt of a tool that ignores its context returns at once", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		calls := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-calls; cancel() }()
		r := toolsafe.Wrap(stub.Stuck(release, calls), toolsafe.WithRetry(policy.Retry{MaxRetries: 3})).Run(ctx, "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindCanceled || r.Status() != "error" || r.Observation() != "" {
			t.Fatalf("got %+v; want canceled with no observation", r)
		}
		if r.Attempts != 1 || r.Abandoned != 1 {
			t.Errorf("attempts %d abandoned %d; want 1 and 1", r.Attempts, r.Abandoned)
		}
	})
	t.Run("a caller's deadline is returned as its error, not as a failure for the model", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := toolsafe.Wrap(stub.Stuck(release, nil), toolsafe.WithDeadline(time.Hour)).Call(ctx, "x")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want context.DeadlineExceeded", err)
		}
	})
}

func TestInvalidOptions(t *testing.T) {
	echo := middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	_, err := toolsafe.New(echo,
		toolsafe.WithRetry(policy.Retry{MaxRetries: -1}),
		toolsafe.WithTimeout(time.Minute),
		toolsafe.WithDeadline(time.Second))
	if err == nil {
		t.Fatal("New accepted invalid options")
	}
	for _, want := range []string{`tool "echo"`, "max retries -1 is negative", "longer than the deadline"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = toolsafe.New(echo, toolsafe.WithRetry(policy.Retry{Backoff: policy.Backoff{Jitter: 2}}))
	if err == nil || !strings.Contains(err.Error(), "jitter 2 is outside [0, 1]") {
		t.Errorf("err = %v; want the jitter named", err)
	}
	if _, err := toolsafe.New(nil); err == nil || err.Error() != "toolsafe: the tool to wrap is nil: pass a tools.Tool" {
		t.Errorf("err = %v; want a nil tool named", err)
	}

	w := toolsafe.Wrap(echo, toolsafe.WithTimeout(-time.Second))
	if w.Err() == nil || w.Name() != "echo" {
		t.Fatalf("Wrap kept no error (%v) or lost the name %q", w.Err(), w.Name())
	}
	if _, err := w.Call(context.Background(), "hi"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("Call on a misconfigured tool = %v; want the configuration error", err)
	}
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
			tool, srv := fixture.Billing(t, toolsafe.WithTimeout(time.Second),
				toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: fixture.Backoff(time.Millisecond), MaxWait: tt.maxWait}))
			srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.TooMany(tt.header))
			r := tool.Run(context.Background(), "INV-1001")
			if r.Failure == nil || r.Failure.Wait != tt.want || r.Attempts != 1 || len(r.Delays) != 0 {
				t.Fatalf("got %+v after %d attempts, delays %v; want a stop after 1 with wait %v",
					r.Failure, r.Attempts, r.Delays, tt.want)
			}
		})
	}
}
