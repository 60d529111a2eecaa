//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/testkit"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// Regression: with only WithDeadline (or a timeout equal to it) and
// FailureThreshold 2, four calls to a hung dependency gave four timeouts and
// four upstream requests: the breaker treated every ended context as the
// caller's and never opened.
func TestAHungDependencyOpensTheBreakerUnderADeadline(t *testing.T) {
	for name, opts := range map[string][]toolsafe.Option{
		"deadline only":               {toolsafe.WithDeadline(100 * time.Millisecond)},
		"timeout equal to a deadline": {toolsafe.WithDeadline(100 * time.Millisecond), toolsafe.WithTimeout(100 * time.Millisecond)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := toolsafetest.NewUpstream(billing.Handler())
			t.Cleanup(srv.Close)
			srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Hang())
			cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Hour})
			tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()), append(opts, toolsafe.WithCircuitBreaker(cb))...)
			var kinds []middleware.Kind
			for range 4 {
				kinds = append(kinds, tool.Run(context.Background(), "INV-1001").Kind())
			}
			want := []middleware.Kind{middleware.KindTimeout, middleware.KindTimeout, middleware.KindCircuitOpen, middleware.KindCircuitOpen}
			if !slices.Equal(kinds, want) || srv.Requests(billing.InvoicePath("INV-1001")) != 2 {
				t.Fatalf("kinds %v, %d upstream requests; want %v and 2", kinds, srv.Requests(billing.InvoicePath("INV-1001")), want)
			}
		})
	}
	t.Run("the caller's own deadline counts neither way", func(t *testing.T) {
		srv := toolsafetest.NewUpstream(billing.Handler())
		t.Cleanup(srv.Close)
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Hang())
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()), toolsafe.WithCircuitBreaker(cb))
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			r := tool.Run(ctx, "INV-1001")
			cancel()
			if r.Kind() != middleware.KindCanceled {
				t.Fatalf("kind %v; want canceled: the caller's deadline", r.Kind())
			}
		}
		if !cb.IsClosed() {
			t.Fatalf("breaker %v; want closed: the caller gave up, the dependency did not fail", cb.State())
		}
	})
}

// Regression: with Probes 1, a tool that hangs ignoring its context and 50
// callers that give up after 5ms, 17 probes reached the tool at once: a
// cancelled probe handed its permit back while its abandoned attempt still
// ran.
func TestHalfOpenProbesAreBoundedWhateverCallersDo(t *testing.T) {
	cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond, Probes: 1})
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	hang := middleware.Func("fetch", "", func(context.Context, string) (string, error) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release // ignores its context
		inFlight.Add(-1)
		return "late", nil
	})
	tool := toolsafe.Wrap(hang, toolsafe.WithCircuitBreaker(cb))
	cb.Open()
	testkit.HalfOpen(cb)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				tool.Run(ctx, "x")
				cancel()
			}
		}()
	}
	wg.Wait()
	close(release)
	if m := most.Load(); m != 1 {
		t.Fatalf("%d probes at the tool at once; want at most Probes = 1", m)
	}
}

// Regression: 10,000 calls to a tool that never returns, with a 1ms
// timeout and no bulkhead, left 40,000 goroutines behind; and a tool that
// returns the moment its context ends was counted abandoned every time.
func TestAbandonedAttemptsAreBoundedPerTool(t *testing.T) {
	t.Run("past the cap, calls are refused", func(t *testing.T) {
		release := make(chan struct{})
		var started atomic.Int32
		never := middleware.Func("stuck", "", func(context.Context, string) (string, error) {
			started.Add(1)
			<-release
			return "", nil
		})
		tool := toolsafe.Wrap(never, toolsafe.WithTimeout(time.Millisecond, 8))
		before := runtime.NumGoroutine()
		var busy int
		for range 200 {
			r := tool.Run(context.Background(), "x")
			if r.Kind() == middleware.KindBusy {
				busy++
				if !strings.Contains(r.Observation(), "still running after their time ran out") {
					t.Fatalf("observation %q; want it to say earlier attempts are stuck", r.Observation())
				}
			}
		}
		if started.Load() != 8 || busy != 192 {
			t.Errorf("%d attempts started, %d refused; want 8 and 192", started.Load(), busy)
		}
		if grown := runtime.NumGoroutine() - before; grown > 8+4 {
			t.Errorf("%d goroutines more; want about the 8 stuck attempts", grown)
		}
		close(release)
	})
	t.Run("a burst of concurrent calls cannot pile up goroutines", func(t *testing.T) {
		release := make(chan struct{})
		var started atomic.Int32
		never := middleware.Func("stuck", "", func(context.Context, string) (string, error) {
			started.Add(1)
			<-release
			return "", nil
		})
		tool := toolsafe.Wrap(never, toolsafe.WithTimeout(time.Millisecond),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0)}), toolsafe.WithMaxAbandoned(8))
		before := runtime.NumGoroutine()
		var wg sync.WaitGroup
		var busy atomic.Int32
		for range 10_000 {
			wg.Go(func() {
				if tool.Run(context.Background(), "x").Kind() == middleware.KindBusy {
					busy.Add(1)
				}
			})
		}
		wg.Wait()
		// At most 16 × 8 attempts ever ran at once; the rest were refused.
		if n := started.Load(); n > 16*8 {
			t.Errorf("%d attempts started; want at most 128", n)
		}
		if grown := runtime.NumGoroutine() - before; grown > 16*8+8 {
			t.Errorf("%d goroutines left running; want at most the 128 stuck attempts", grown)
		}
		if busy.Load() < 10_000-16*8 {
			t.Errorf("%d calls refused; want all but the ones that ran", busy.Load())
		}
		close(release)
	})
	// In a synctest bubble the 1ms grace cannot run out while the tool,
	// woken by its context, waits for a CPU: a busy machine does not make
	// it look stuck.
	t.Run("a tool that honours its context is not abandoned", func(t *testing.T) { synctest.Test(t, honoursItsContext) })
}

func honoursItsContext(t *testing.T) {
	prompt := middleware.Func("prompt", "", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	tool := toolsafe.Wrap(prompt, toolsafe.WithTimeout(time.Millisecond))
	abandoned := 0
	for range 50 {
		r := tool.Run(context.Background(), "x")
		if r.Kind() != middleware.KindTimeout {
			t.Fatalf("kind %v; want tool-timeout", r.Kind())
		}
		abandoned += r.Abandoned
	}
	if abandoned != 0 {
		t.Errorf("%d of 50 timeouts counted abandoned; want 0: the tool returned when asked", abandoned)
	}
}

// Regression: a call that waited for a bulkhead slot until its 200ms
// deadline passed told the model "issue_refund did not answer within 200ms",
// though it was never called.
func TestADeadlineWhileWaitingForASlotSaysTheToolWasNotCalled(t *testing.T) {
	slots := policy.NewBulkhead("billing", 1, time.Minute)
	hold, release := make(chan struct{}), make(chan struct{})
	holder := toolsafe.Wrap(middleware.Func("holder", "", func(context.Context, string) (string, error) {
		close(hold)
		<-release
		return "", nil
	}), toolsafe.WithBulkhead(slots))
	go holder.Run(context.Background(), "x")
	<-hold
	defer close(release)
	var ran atomic.Int32
	refund := toolsafe.Wrap(testkit.Done("issue_refund", &ran), toolsafe.WithBulkhead(slots), toolsafe.WithDeadline(200*time.Millisecond))
	r := refund.Run(context.Background(), "x")
	want := "issue_refund was not called: its time (200ms) ran out while it was waiting for a free slot at its dependency billing. Do not call issue_refund again with the same input for this request; tell the user it is unavailable or use another tool."
	if r.Kind() != middleware.KindTimeout || r.Attempts != 0 || ran.Load() != 0 || r.Observation() != want {
		t.Fatalf("%v after %d attempts, ran %d:\n got %q\nwant %q", r.Kind(), r.Attempts, ran.Load(), r.Observation(), want)
	}
}

// Regression (issue "exactly once under store faults", item 8): with
// WithDeadline(1) the model was told "t did not answer within under 1ms",
// though the tool never ran. A limit that passes before the first attempt
// says the tool was not called and why, with or without a retry or an
// attempt timeout inside it; a limit under 1ms that cut a running attempt
// reads as English.
func TestADeadlineThatPassesBeforeTheFirstAttemptSaysTheToolWasNotCalled(t *testing.T) {
	var ran atomic.Int32
	for _, opts := range [][]toolsafe.Option{
		{toolsafe.WithDeadline(1)},
		{toolsafe.WithDeadline(1), toolsafe.WithRetry(policy.Retry{MaxRetries: 2})},
		{toolsafe.WithDeadline(1), toolsafe.WithTimeout(1)},
	} {
		r := toolsafe.Wrap(testkit.Done("t", &ran), opts...).Run(context.Background(), "x")
		want := "t was not called: its time (under 1ms) ran out before its first attempt could begin. Do not call t again with the same input for this request; tell the user it is unavailable or use another tool."
		if r.Kind() != middleware.KindTimeout || r.Attempts != 0 || ran.Load() != 0 || r.Observation() != want {
			t.Errorf("%v after %d attempts, ran %d:\n got %q\nwant %q", r.Kind(), r.Attempts, ran.Load(), r.Observation(), want)
		}
	}
	cut := &middleware.Failure{Kind: middleware.KindTimeout, Tool: "t", Attempts: 1, Timeout: time.Microsecond}
	if got, want := cut.Error(), "t did not answer within its time (under 1ms) after 1 attempt."; !strings.HasPrefix(got, want) {
		t.Errorf("an attempt cut under 1ms: %q; want it to start %q", got, want)
	}
	open := &middleware.Failure{Kind: middleware.KindCircuitOpen, Tool: "t", Wait: time.Microsecond}
	if got := open.Error(); strings.Contains(got, "about under") {
		t.Errorf("a breaker open for under 1ms: %q", got)
	}
}

// Regression: MaxRetries 1e9 with the zero Backoff and no deadline was a
// busy loop of about 60k attempts a second.
func TestRetriesWithTheZeroBackoffWaitAsTheDefault(t *testing.T) {
	var attempts atomic.Int32
	failing := middleware.Func("flaky", "", func(context.Context, string) (string, error) {
		attempts.Add(1)
		return "", middleware.Transient(errFlaky)
	})
	first := make(chan time.Duration, 1)
	tool := toolsafe.Wrap(failing, toolsafe.WithRetry(policy.Retry{MaxRetries: 1e9}),
		toolsafe.With(observing(func(e call.Event) {
			if r, ok := e.(call.RetryScheduled); ok && r.Attempt == 1 {
				first <- r.Delay
			}
		})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tool.Run(ctx, "x") }()
	d := <-first
	cancel()
	<-done
	if d < 500*time.Millisecond || d > 625*time.Millisecond || attempts.Load() != 1 {
		t.Fatalf("first wait %v after %d attempts; want DefaultBackoff's 500ms..625ms after 1", d, attempts.Load())
	}
}

var errFlaky = errorString("flaky")

type errorString string

func (e errorString) Error() string { return string(e) }

// observing is a middleware that adds f as an observer of each call.
func observing(f func(call.Event)) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			call.Observe(ctx, call.ObserverFunc(f))
			return next.Call(ctx, input)
		})
	}
}
