package policy_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func TestCircuitBreaker(t *testing.T) {
	const inv = "INV-1001"
	path := billing.InvoicePath(inv)

	t.Run("it opens after its threshold and later calls make no request upstream", func(t *testing.T) {
		t.Parallel()
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 3, Delay: time.Hour})
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 5, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithCircuitBreaker(cb))
		srv.Always(path, toolsafetest.Reset())

		r := tool.Run(context.Background(), inv)
		if testkit.Kind(r) != middleware.KindCircuitOpen || r.Attempts != 3 || srv.Requests(path) != 3 {
			t.Fatalf("got %q after %d attempts and %d requests; want circuit-open after 3 and 3", testkit.Kind(r), r.Attempts, srv.Requests(path))
		}
		if !cb.IsOpen() {
			t.Fatalf("breaker %v; want open", cb.State())
		}
		if want := "fetch_invoice failed after 3 attempts"; !strings.HasPrefix(r.Observation(), want) {
			t.Errorf("observation %q; want it to start with %q", r.Observation(), want)
		}

		for range 5 {
			r := tool.Run(context.Background(), inv)
			if testkit.Kind(r) != middleware.KindCircuitOpen || r.Attempts != 0 || r.Failure.Retryable {
				t.Fatalf("got %q after %d attempts; want circuit-open after 0, not retryable", testkit.Kind(r), r.Attempts)
			}
			if r.Failure.Wait < 59*time.Minute {
				t.Errorf("wait %v; want the breaker's remaining delay, about 1h", r.Failure.Wait)
			}
			if want := "fetch_invoice was not called: its dependency billing is down for about "; !strings.HasPrefix(r.Observation(), want) {
				t.Errorf("observation %q; want it to start with %q", r.Observation(), want)
			}
		}
		if got := srv.Requests(path); got != 3 {
			t.Errorf("upstream got %d requests; want still 3: an open breaker sends nothing", got)
		}
	})

	t.Run("it half-opens after its delay and closes after successful probes", func(t *testing.T) {
		t.Parallel()
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: 50 * time.Millisecond, Probes: 2})
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb))
		srv.Enqueue(path, toolsafetest.Reset(), toolsafetest.Reset())
		tool.Run(context.Background(), inv)
		tool.Run(context.Background(), inv)
		if !cb.IsOpen() {
			t.Fatalf("breaker %v after 2 failures; want open", cb.State())
		}
		if r := tool.Run(context.Background(), inv); testkit.Kind(r) != middleware.KindCircuitOpen {
			t.Fatalf("got %q while open; want circuit-open", testkit.Kind(r))
		}

		testkit.HalfOpen(cb)
		if r := tool.Run(context.Background(), inv); r.Status() != "ok" {
			t.Fatalf("first probe: %q (%s); want ok", r.Status(), r.Observation())
		}
		if !cb.IsHalfOpen() {
			t.Fatalf("breaker %v after 1 of 2 probes; want half-open", cb.State())
		}
		if r := tool.Run(context.Background(), inv); r.Status() != "ok" {
			t.Fatalf("second probe: %q; want ok", r.Status())
		}
		if !cb.IsClosed() {
			t.Fatalf("breaker %v after 2 successful probes; want closed", cb.State())
		}
		if got := srv.Requests(path); got != 4 {
			t.Errorf("upstream got %d requests; want 4 (2 failures, 2 probes)", got)
		}
	})

	t.Run("half-open lets at most Probes attempts through at once", func(t *testing.T) {
		t.Parallel()
		h := testkit.Hold(billing.Handler())
		srv := toolsafetest.NewUpstream(h)
		t.Cleanup(srv.Close)
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond, Probes: 2})
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()), toolsafe.WithCircuitBreaker(cb))
		cb.Open()
		testkit.HalfOpen(cb)

		const callers = 6
		results := make(chan middleware.Result, callers)
		for range callers {
			go func() { results <- tool.Run(context.Background(), inv) }()
		}
		<-h.Arrived
		<-h.Arrived
		for range callers - 2 { // the others are refused while the probes run
			if r := <-results; testkit.Kind(r) != middleware.KindCircuitOpen || r.Attempts != 0 {
				t.Errorf("got %q after %d attempts; want circuit-open after 0", testkit.Kind(r), r.Attempts)
			}
		}
		close(h.Release)
		for range 2 {
			if r := <-results; r.Status() != "ok" {
				t.Errorf("probe: %q; want ok", r.Status())
			}
		}
		if got := srv.Requests(path); got != 2 {
			t.Errorf("upstream got %d requests; want 2 probes", got)
		}
		if !cb.IsClosed() {
			t.Errorf("breaker %v; want closed after 2 successful probes", cb.State())
		}
	})

	t.Run("tool-error does not move it", func(t *testing.T) {
		t.Parallel()
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Millisecond})
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb))
		srv.Enqueue(path, toolsafetest.Reset())
		tool.Run(context.Background(), inv) // 1 failure of 2
		for range 3 {
			// A number that does not exist: the upstream answers 404.
			if r := tool.Run(context.Background(), "INV-9999"); testkit.Kind(r) != middleware.KindToolError {
				t.Fatalf("got %q; want tool-error", testkit.Kind(r))
			}
		}
		if m := cb.Metrics(); m.Failures() != 1 || m.Successes() != 0 || !cb.IsClosed() {
			t.Fatalf("breaker %v with %d failures, %d successes; want closed with 1 and 0: tool-errors count neither way",
				cb.State(), m.Failures(), m.Successes())
		}
		srv.Enqueue(path, toolsafetest.Reset())
		tool.Run(context.Background(), inv)
		if !cb.IsOpen() {
			t.Fatalf("breaker %v; want open: the tool-errors between the 2 failures must not reset the count", cb.State())
		}

		testkit.HalfOpen(cb)
		for range 3 { // tool-errors while half-open neither close it nor keep its only probe
			if r := tool.Run(context.Background(), "INV-9999"); testkit.Kind(r) != middleware.KindToolError {
				t.Fatalf("half-open: got %q; want tool-error", testkit.Kind(r))
			}
		}
		if !cb.IsHalfOpen() {
			t.Fatalf("breaker %v after tool-errors; want still half-open", cb.State())
		}
		if r := tool.Run(context.Background(), inv); r.Status() != "ok" || !cb.IsClosed() {
			t.Fatalf("probe %q, breaker %v; want ok and closed", r.Status(), cb.State())
		}
	})

	t.Run("the caller's cancellation does not move it and a cancelled probe gives its permit back", func(t *testing.T) {
		t.Parallel()
		h := testkit.Hold(billing.Handler())
		srv := toolsafetest.NewUpstream(h)
		t.Cleanup(srv.Close)
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Millisecond, Probes: 1})
		// A probe's permit comes back once its tool has really returned: an
		// attempt the cancellation cut is followed to its end.
		returned := make(chan struct{}, 16)
		follow := toolsafe.With(func(next tools.Tool) tools.Tool {
			return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
				call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
					if _, ok := e.(call.AbandonedReturned); ok {
						returned <- struct{}{}
					}
				}))
				return next.Call(ctx, input)
			})
		})
		tool := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
			toolsafe.WithCircuitBreaker(cb), toolsafe.WithTimeout(time.Hour), follow)

		cancelled := func() middleware.Result {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { <-h.Arrived; cancel() }()
			r := tool.Run(ctx, inv)
			for range r.Abandoned {
				<-returned // the tool took longer than the grace to return
			}
			return r
		}

		// Closed: cancellations are neither failures nor successes.
		for range 3 {
			if r := cancelled(); testkit.Kind(r) != middleware.KindCanceled {
				t.Fatalf("got %q; want canceled", testkit.Kind(r))
			}
		}
		if m := cb.Metrics(); m.Executions() != 0 || !cb.IsClosed() {
			t.Fatalf("breaker %v with %d executions recorded; want closed with 0", cb.State(), m.Executions())
		}

		// Half-open with one probe: a cancelled probe must not close it, and
		// must not keep the only permit.
		cb.Open()
		testkit.HalfOpen(cb)
		for range 3 {
			if r := cancelled(); testkit.Kind(r) != middleware.KindCanceled {
				t.Fatalf("half-open: got %q; want canceled", testkit.Kind(r))
			}
			if !cb.IsHalfOpen() || cb.Metrics().Executions() != 0 {
				t.Fatalf("breaker %v with %d executions after a cancelled probe; want half-open with 0", cb.State(), cb.Metrics().Executions())
			}
		}
		close(h.Release)
		if r := tool.Run(context.Background(), inv); r.Status() != "ok" {
			t.Fatalf("the next probe: %q (%s); want ok: the cancelled probes gave their permit back", r.Status(), r.Observation())
		}
		if !cb.IsClosed() {
			t.Errorf("breaker %v; want closed after a successful probe", cb.State())
		}
		if got := srv.Requests(path); got != 7 {
			t.Errorf("upstream got %d requests; want 7 (6 cancelled, 1 probe)", got)
		}
	})

	t.Run("a plain failsafe-go breaker works too", func(t *testing.T) {
		t.Parallel()
		cb := circuitbreaker.NewBuilder[string]().WithFailureThreshold(1).WithDelay(time.Hour).Build()
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb))
		srv.Always(path, toolsafetest.Reset())
		tool.Run(context.Background(), inv)
		r := tool.Run(context.Background(), inv)
		if testkit.Kind(r) != middleware.KindCircuitOpen || srv.Requests(path) != 1 {
			t.Fatalf("got %q with %d requests; want circuit-open with 1", testkit.Kind(r), srv.Requests(path))
		}
		if want := "fetch_invoice was not called: its dependency is down for about"; !strings.HasPrefix(r.Observation(), want) {
			t.Errorf("observation %q; want it to start with %q", r.Observation(), want)
		}
	})

	t.Run("each state change is told to the call that caused it", func(t *testing.T) {
		t.Parallel()
		var changes []string
		observe := toolsafe.With(func(next tools.Tool) tools.Tool {
			return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
				call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
					if c, ok := e.(call.BreakerStateChanged); ok {
						changes = append(changes, c.Breaker+": "+c.From+" -> "+c.To)
					}
				}))
				return next.Call(ctx, input)
			})
		})
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond})
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb), observe)
		srv.Enqueue(path, toolsafetest.Reset())
		tool.Run(context.Background(), inv)
		testkit.HalfOpen(cb)
		tool.Run(context.Background(), inv)
		want := []string{"billing: closed -> open", "billing: open -> half-open", "billing: half-open -> closed"}
		if !slices.Equal(changes, want) {
			t.Errorf("changes %q; want %q", changes, want)
		}
	})

	t.Run("an attempt timeout counts as a failure", func(t *testing.T) {
		t.Parallel()
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
		tool, srv := testkit.Billing(t, toolsafe.WithCircuitBreaker(cb), toolsafe.WithTimeout(20*time.Millisecond))
		srv.Enqueue(path, toolsafetest.Hang())
		if r := tool.Run(context.Background(), inv); testkit.Kind(r) != middleware.KindTimeout {
			t.Fatalf("got %q; want tool-timeout", testkit.Kind(r))
		}
		if !cb.IsOpen() {
			t.Errorf("breaker %v; want open", cb.State())
		}
	})
}

// The storm: many agents call one dependency that is down. Without a
// breaker every call makes all its attempts; with one, the dependency sees
// about one request per caller in flight when it opened, then none.
func TestStorm(t *testing.T) {
	const (
		callers    = 100
		maxRetries = 3
		threshold  = 5
	)
	path := billing.InvoicePath("INV-1001")
	storm := func(tool tools.Tool) map[middleware.Kind]int {
		var mu sync.Mutex
		kinds := make(map[middleware.Kind]int)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				r := tool.(*toolsafe.Tool).Run(context.Background(), "INV-1001")
				mu.Lock()
				kinds[testkit.Kind(r)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return kinds
	}
	retry := policy.Retry{MaxRetries: maxRetries, Backoff: testkit.Backoff(5 * time.Millisecond)}

	naive, naiveSrv := testkit.Billing(t, toolsafe.WithRetry(retry))
	naiveSrv.Always(path, toolsafetest.Reset())
	naiveKinds := storm(naive)
	naiveRequests := naiveSrv.Requests(path)
	t.Logf("naive retries: %d calls, %d upstream requests, %.2f per call, outcomes %v",
		callers, naiveRequests, float64(naiveRequests)/callers, naiveKinds)
	if naiveRequests != callers*(maxRetries+1) {
		t.Fatalf("naive retries sent %d requests; want %d", naiveRequests, callers*(maxRetries+1))
	}

	cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: threshold, Delay: time.Hour})
	guarded, srv := testkit.Billing(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: retry.MaxRetries, Backoff: retry.Backoff, Budget: budget.NewBuilder().WithMaxRate(0.2).Build()}),
		toolsafe.WithCircuitBreaker(cb))
	srv.Always(path, toolsafetest.Reset())
	kinds := storm(guarded)
	first := srv.Requests(path)
	t.Logf("breaker and budget, wave 1: %d calls, %d upstream requests, %.2f per call, outcomes %v",
		callers, first, float64(first)/callers, kinds)
	// Every attempt that reached the upstream got its permit while the
	// breaker was closed: the ones that failed before it opened (at most
	// threshold) plus at most one in flight per caller when it opened.
	if first > callers+threshold {
		t.Errorf("%d requests; want at most %d (one per caller in flight + the threshold)", first, callers+threshold)
	}
	if kinds[middleware.KindCircuitOpen] == 0 {
		t.Errorf("no call was refused by the open breaker: %v", kinds)
	}
	kinds = storm(guarded)
	second := srv.Requests(path) - first
	t.Logf("breaker and budget, wave 2: %d calls, %d upstream requests, outcomes %v", callers, second, kinds)
	if second != 0 || kinds[middleware.KindCircuitOpen] != callers {
		t.Errorf("wave 2 sent %d requests, outcomes %v; want 0 and all circuit-open", second, kinds)
	}
	t.Logf("per logical call over both waves: %.2f with breaker and budget, %.2f with naive retries",
		float64(first+second)/(2*callers), float64(naiveRequests)/callers)
}

// attemptHeader carries the attempt number to the budget test's upstream.
const attemptHeader = "X-Attempt"

// The retry budget holds the retries in flight to a share of the calls in
// flight, so many callers retrying a struggling service cannot multiply its
// load.
func TestRetryBudget(t *testing.T) {
	const callers = 100
	release := make(chan struct{})
	retrying := make(chan struct{}, callers)
	srv := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(attemptHeader) == "1" {
			http.Error(w, "struggling", http.StatusServiceUnavailable)
			return
		}
		retrying <- struct{}{}
		select { // a retry is slow: it holds its place in the budget
		case <-release:
			_, _ = w.Write([]byte("ok"))
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	client := toolsafetest.NoKeepAliveClient()
	get := middleware.Func("status", "reads the status", func(ctx context.Context, _ string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/status", nil)
		if err != nil {
			return "", err
		}
		req.Header.Set(attemptHeader, strconv.Itoa(middleware.AttemptNumber(ctx)))
		if _, err := middleware.DoHTTP(client, req); err != nil {
			return "", err
		}
		return "ok", nil
	})
	tool := toolsafe.Wrap(get,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond),
			Budget: budget.NewBuilder().WithMaxRate(0.2).WithMinConcurrency(3).Build()}))

	results := make(chan middleware.Result, callers)
	for range callers {
		go func() { results <- tool.Run(context.Background(), "") }()
	}
	// Each call either has its retry waiting upstream or has ended,
	// refused by the budget.
	retried, refused := 0, 0
	for retried+refused < callers {
		select {
		case <-retrying:
			retried++
		case r := <-results:
			if testkit.Kind(r) != middleware.KindBudget || r.Attempts != 1 {
				t.Fatalf("a call ended with %q after %d attempts; want budget-exceeded after 1", testkit.Kind(r), r.Attempts)
			}
			if !strings.Contains(r.Observation(), "retries are being held back") {
				t.Errorf("observation %q does not say why it was not retried", r.Observation())
			}
			refused++
		}
	}
	t.Logf("retry budget 0.2: %d of %d calls retried at once, %d refused; %d upstream requests (%.2f per call) where naive retries would send %d",
		retried, callers, refused, srv.Requests(""), float64(srv.Requests(""))/callers, 2*callers)
	// Retries are admitted while they are at most a fifth of the attempts
	// in flight: r/(calls+r) ≤ 0.2 with at most 100 calls gives r ≤ 25,
	// and the last one admitted makes 26.
	if retried > 26 || retried < 3 {
		t.Errorf("%d retries in flight at once; want between 3 (the minimum) and 26", retried)
	}
	close(release)
	for range retried {
		if r := <-results; r.Status() != "ok" || r.Attempts != 2 {
			t.Errorf("a retried call: %q after %d attempts; want ok after 2", r.Status(), r.Attempts)
		}
	}
}

// The fleet benchmark's upstream counts the half-open probes it serves at
// once: the tool learns from IsProbe which attempts are probes.
func TestIsProbe(t *testing.T) {
	cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond, Probes: 1})
	var probes []bool
	fail := true
	tool := toolsafe.Wrap(middleware.Func("fetch_invoice", "fetches an invoice", func(ctx context.Context, input string) (string, error) {
		probes = append(probes, policy.IsProbe(ctx))
		if fail {
			return "", middleware.Transient(errors.New("connection reset"))
		}
		return "found", nil
	}), toolsafe.WithCircuitBreaker(cb), toolsafe.WithLogger(testkit.Quiet()))

	tool.Run(context.Background(), "INV-1001") // closed: not a probe; it opens the breaker
	testkit.HalfOpen(cb)
	tool.Run(context.Background(), "INV-1001") // a probe that fails: open again
	testkit.HalfOpen(cb)
	fail = false
	tool.Run(context.Background(), "INV-1001") // a probe that succeeds: closed
	tool.Run(context.Background(), "INV-1001") // closed: not a probe
	if want := []bool{false, true, true, false}; !slices.Equal(probes, want) {
		t.Errorf("IsProbe in the tool's attempts: %v; want %v", probes, want)
	}
	if policy.IsProbe(context.Background()) {
		t.Error("IsProbe outside a breaker: true; want false")
	}
}
