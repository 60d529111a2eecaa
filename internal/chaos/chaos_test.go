package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/tmc/langchaingo/tools"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	calls      = 2000 // logical calls, not counting resumed ones
	workers    = 50   // goroutines making them
	maxRetries = 3
	// margin is how late past its deadline a call may return: time for the
	// race detector and two busy CPUs to schedule the caller again. An
	// invariant, not a speed target. The deadline is when a timer set for
	// it fires, if that is later: when the whole process stalls (a busy
	// machine, a garbage collection under the race detector), the timer is
	// late too, and the call is not blamed for the stall.
	margin = 250 * time.Millisecond
	seed   = 20261129
)

// faults are the random faults of every request no script applies to. A
// Retry-After of 1s fits in a lookup's deadline once, never in a charge's
// or a delete's.
var faults = toolsafetest.Chaos{
	Reset:       0.06,
	TooMany:     0.03,
	Unavailable: 0.03,
	Hang:        0.03,
	Slow:        0.05,
	RetryAfter:  "1",
	SlowDelay:   60 * time.Millisecond,
}

// ledger is the upstream's own account: what it applied, once per
// Idempotency-Key, and the keys each operation came with.
type ledger struct {
	mu      sync.Mutex
	byKey   map[string]bool            // keys whose action was applied
	applied map[string]int             // operation → times applied
	keys    map[string]map[string]bool // operation → keys seen
	noKey   int                        // side-effecting requests without a key
	n       int                        // applications so far
}

func newLedger() *ledger {
	return &ledger{byKey: map[string]bool{}, applied: map[string]int{}, keys: map[string]map[string]bool{}}
}

// handler serves GET /read/{op}, and POST /charge/{op} and /delete/{op},
// applied once per Idempotency-Key. Every fifth application loses its
// answer: the connection is closed before it is sent, so the tool cannot
// know it landed and retries with the same key.
func (l *ledger) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /read/{op}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "read "+r.PathValue("op"))
	})
	apply := func(w http.ResponseWriter, r *http.Request) {
		op, key := r.PathValue("op"), r.Header.Get("Idempotency-Key")
		l.mu.Lock()
		if key == "" {
			l.noKey++
			l.mu.Unlock()
			http.Error(w, "no Idempotency-Key", http.StatusBadRequest)
			return
		}
		if l.keys[op] == nil {
			l.keys[op] = map[string]bool{}
		}
		l.keys[op][key] = true
		lose := false
		if !l.byKey[key] {
			l.byKey[key] = true
			l.applied[op]++
			l.n++
			lose = l.n%5 == 0
		}
		l.mu.Unlock()
		if lose {
			panic(http.ErrAbortHandler) // applied, and the answer is lost
		}
		_, _ = io.WriteString(w, "applied "+op)
	}
	mux.HandleFunc("POST /charge/{op}", apply)
	mux.HandleFunc("POST /delete/{op}", apply)
	return mux
}

// runKey marks the context of one Run, so the layers' callbacks and the
// tool can say which Run they belong to.
type runKey struct{}

func runOf(ctx context.Context) int {
	n, _ := ctx.Value(runKey{}).(int)
	return n
}

// counts is what the test sees from inside: tool invocations and results,
// by Run, and destructive invocations by operation.
type counts struct {
	mu          sync.Mutex
	invocations map[int]int
	results     map[int]int
	deletes     map[string]int
}

func (c *counts) add(m map[int]int, run int) {
	c.mu.Lock()
	m[run]++
	c.mu.Unlock()
}

// httpTool is a tool that sends its input, an operation name, appended to
// base; with key it sends the call's idempotency key.
func httpTool(name, method, base string, client *http.Client, key bool, seen *counts) tools.Tool {
	return middleware.Func(name, "chaos test tool "+name, func(ctx context.Context, op string) (string, error) {
		seen.add(seen.invocations, runOf(ctx))
		if name == "delete_record" {
			seen.mu.Lock()
			seen.deletes[op]++
			seen.mu.Unlock()
		}
		req, err := http.NewRequestWithContext(ctx, method, base+op, nil)
		if err != nil {
			return "", err
		}
		if key {
			req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if err := middleware.FromHTTPResponse(resp); err != nil {
			return "", err
		}
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	})
}

// run is one Run of a tool and what came of it.
type run struct {
	id       int
	tool     string
	path     string // the upstream path of its operation, op appended
	op       string
	deadline time.Duration
	elapsed  time.Duration
	late     time.Duration // from its deadline (see margin) to its return
	lag      time.Duration // how late the timer set for its deadline fired
	result   middleware.Result
}

// TestChaos runs thousands of calls from many goroutines through every
// layer (retries with Retry-After, attempt timeout, deadline, a shared
// breaker, bulkhead and retry budget, tracing and metrics, side effects
// with idempotency keys, a destructive tool behind an approval gate)
// against an upstream that fails at random, and checks what must hold
// whatever the faults: one result per call, on time; never more attempts
// than allowed; no side effect applied twice; no destructive attempt
// without a grant of its own; no goroutine left behind.
func TestChaos(t *testing.T) {
	began := time.Now()
	book := newLedger()
	srv := toolsafetest.NewUpstream(book.handler())
	defer srv.Close()
	srv.Chaos(seed, faults)
	// A new connection per request: net/http then resends nothing on its
	// own, so every request the upstream counts is an attempt of a tool.
	client := toolsafetest.NoKeepAliveClient()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	hook := otelhook.New(otelhook.WithTracerProvider(tp), otelhook.WithMeterProvider(mp))

	seen := &counts{invocations: map[int]int{}, results: map[int]int{}, deletes: map[string]int{}}
	breaker := policy.NewCircuitBreaker("upstream", policy.Breaker{FailureThreshold: 5, Delay: 10 * time.Millisecond, Probes: 2})
	bulkhead := policy.NewBulkhead("upstream", 12, 25*time.Millisecond)
	retryBudget := budget.NewBuilder().WithMaxRate(0.2).Build()
	grants := middleware.NewGrants()
	common := []toolsafe.Option{
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Backoff{
			Base: 5 * time.Millisecond, Max: 40 * time.Millisecond, Multiplier: 2, Jitter: 0.5}}),
		toolsafe.WithTimeout(100 * time.Millisecond),
		toolsafe.WithCircuitBreaker(breaker),
		toolsafe.WithBulkhead(bulkhead),
		toolsafe.WithRetryBudget(retryBudget),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(slog.New(slog.DiscardHandler)),
		toolsafe.WithOnResult(func(ctx context.Context, _ middleware.Result) { seen.add(seen.results, runOf(ctx)) }),
	}
	type wrapped struct {
		tool     *toolsafe.Tool
		deadline time.Duration
		path     string
	}
	// wrap wraps a tool that sends its operation to path; a POST sends the
	// call's idempotency key.
	wrap := func(name, method, path string, deadline time.Duration, opts ...toolsafe.Option) wrapped {
		t.Helper()
		inner := httpTool(name, method, srv.URL()+path, client, method == http.MethodPost, seen)
		opts = append(slices.Clip(common), opts...)
		w, err := toolsafe.New(inner, append(opts, toolsafe.WithDeadline(deadline))...)
		if err != nil {
			t.Fatal(err)
		}
		return wrapped{w, deadline, path}
	}
	lookup := wrap("lookup", http.MethodGet, "/read/", 1500*time.Millisecond)
	// quick's deadline leaves room for one attempt timeout and a little
	// more: a fifth of its calls are scripted to hang, then answer too
	// late, so the deadline ends them in the middle of an attempt.
	quick := wrap("quick_lookup", http.MethodGet, "/read/", 150*time.Millisecond)
	charge := wrap("charge", http.MethodPost, "/charge/", 600*time.Millisecond,
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	remove := wrap("delete_record", http.MethodPost, "/delete/", 800*time.Millisecond,
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(grants), toolsafe.WithDestructive())

	var (
		mu      sync.Mutex
		runs    []run
		granted = map[string]int{} // delete operation → grants issued
		nextRun atomic.Int64
	)
	do := func(ctx context.Context, w wrapped, op string) middleware.Result {
		id := int(nextRun.Add(1))
		fired := make(chan time.Time, 1)
		start := time.Now()
		timer := time.AfterFunc(w.deadline, func() { fired <- time.Now() })
		r := w.tool.Run(context.WithValue(ctx, runKey{}, id), op)
		end := time.Now()
		due := start.Add(w.deadline)
		lag := time.Duration(0)
		if !timer.Stop() {
			lag = max(0, (<-fired).Sub(due))
		}
		mu.Lock()
		runs = append(runs, run{id: id, tool: w.tool.Name(), path: w.path + op, op: op, deadline: w.deadline,
			elapsed: end.Sub(start), late: end.Sub(due.Add(lag)), lag: lag, result: r})
		mu.Unlock()
		return r
	}
	grant := func(op string) {
		grants.Grant("delete_record", op)
		mu.Lock()
		granted[op]++
		mu.Unlock()
	}

	jobs := make(chan int, calls)
	for i := range calls {
		jobs <- i
	}
	close(jobs)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range jobs {
				switch i % 10 {
				case 0, 1, 2, 3:
					do(ctx, lookup, fmt.Sprintf("r-%d", i))
				case 4:
					op := fmt.Sprintf("q-%d", i)
					if i/10%5 == 0 {
						srv.Enqueue("/read/"+op, toolsafetest.Hang(), toolsafetest.Slow(time.Second))
					}
					do(ctx, quick, op)
				case 5, 6, 7:
					do(ctx, charge, fmt.Sprintf("c-%d", i))
				default:
					op := fmt.Sprintf("d-%d", i)
					// None, a denial, one grant (twice as often) or two.
					switch (i/10 + i%10) % 5 {
					case 1:
						grants.Deny("delete_record", op)
					case 2, 3:
						grant(op)
					case 4:
						grant(op)
						grant(op)
					}
					r := do(ctx, remove, op)
					// A retry that waits for its own approval gets it once,
					// and the call is resumed with its idempotency key.
					var ar *middleware.ApprovalRequired
					if r.Failure != nil && errors.As(r.Failure, &ar) && ar.Attempt > 1 {
						grant(op)
						do(middleware.Resume(ctx, ar), remove, op)
					}
				}
			}
		})
	}
	wg.Wait()
	callsDone := time.Since(began)

	// Every call has returned. Release the upstream, let the attempts the
	// attempt timeout gave up on finish, and check nothing is left.
	srv.Release()
	srv.Close()
	client.CloseIdleConnections()
	goleak.VerifyNone(t)

	kinds, okByTool := map[string]int{}, map[string]int{}
	allowed := map[string]bool{
		"ok": true, "tool-failed": true, "tool-timeout": true, "circuit-open": true, "tool-busy": true,
		"budget-exceeded": true, "approval-required": true, "approval-denied": true,
	}
	attempts, retried, retryAfterStops, deadlineStops := 0, 0, 0, 0
	latest, lag := time.Duration(math.MinInt64), time.Duration(0) // the latest return, the latest timer
	seen.mu.Lock()
	defer seen.mu.Unlock()
	book.mu.Lock()
	defer book.mu.Unlock()
	for _, r := range runs {
		res := r.result
		kind := "ok"
		if res.Failure != nil {
			kind = string(res.Failure.Kind)
		}
		kinds[kind]++
		if kind == "ok" {
			okByTool[r.tool]++
		}
		attempts += res.Attempts
		if res.Attempts > 1 {
			retried++
		}
		what := fmt.Sprintf("run %d (%s %s): %s after %d attempts in %v", r.id, r.tool, r.op, kind, res.Attempts, r.elapsed)

		if n := seen.results[r.id]; n != 1 {
			t.Errorf("%s: %d results; want exactly 1", what, n)
		}
		if !allowed[kind] {
			t.Errorf("%s: a kind chaos cannot cause (%s)", what, res.Observation())
		}
		latest, lag = max(latest, r.late), max(lag, r.lag)
		if res.Failure != nil && res.Failure.Kind == middleware.KindTimeout && res.Failure.Timeout == r.deadline {
			deadlineStops++
		}
		if r.late > margin {
			t.Errorf("%s: returned %v after its %v deadline (a timer set for it fired %v late)", what, r.late, r.deadline, r.lag)
		}
		if res.Attempts > maxRetries+1 {
			t.Errorf("%s: more than %d attempts", what, maxRetries+1)
		}
		// Once every abandoned attempt has finished, the tool ran exactly
		// once per attempt the call counted.
		if n := seen.invocations[r.id]; n != res.Attempts {
			t.Errorf("%s: the tool ran %d times", what, n)
		}
		if r.tool != "delete_record" {
			// One Run per operation: its requests are its attempts.
			if n := srv.Requests(r.path); n > maxRetries+1 {
				t.Errorf("%s: the upstream got %d requests", what, n)
			}
		}
		if obs := res.Observation(); res.Status() == "error" {
			if !strings.Contains(obs, r.tool) {
				t.Errorf("%s: the model's message does not name the tool: %q", what, obs)
			}
			for _, raw := range []string{"toolsafetest", "EOF", "reset by peer", "127.0.0.1"} {
				if strings.Contains(obs, raw) {
					t.Errorf("%s: the model's message holds %q: %q", what, raw, obs)
				}
			}
			if res.Failure.Kind == middleware.KindFailed && res.Failure.Wait > 0 {
				retryAfterStops++
				if !strings.Contains(obs, "asked to wait 1s") {
					t.Errorf("%s: the upstream asked to wait %v and the message does not say so: %q", what, res.Failure.Wait, obs)
				}
			}
		}
	}

	// Side effects: once per key, one key per operation (a resumed delete
	// keeps its paused call's key), and never a request without one.
	if book.noKey != 0 {
		t.Errorf("%d side-effecting requests came without an Idempotency-Key", book.noKey)
	}
	for op, n := range book.applied {
		if n > 1 {
			t.Errorf("%s was applied %d times", op, n)
		}
	}
	for op, keys := range book.keys {
		if len(keys) > 1 {
			t.Errorf("%s came with %d idempotency keys; want 1: the same action would be applied again", op, len(keys))
		}
	}

	// The destructive tool: no attempt without a grant of its own.
	deleteRuns := 0
	mu.Lock()
	for _, r := range runs {
		if r.tool != "delete_record" {
			continue
		}
		deleteRuns++
		if n, g := seen.deletes[r.op], granted[r.op]; n > g {
			t.Errorf("delete %s ran %d times on %d grants", r.op, n, g)
		}
		if n, g := srv.Requests(r.path), granted[r.op]; n > g {
			t.Errorf("delete %s reached the upstream %d times on %d grants", r.op, n, g)
		}
	}
	mu.Unlock()

	// The telemetry agrees: a call span per call, an attempt span per
	// attempt, every call counted, no abandoned attempt still in flight.
	callSpans, attemptSpans := 0, 0
	attemptKinds := map[string]int{}
	for _, s := range spans.GetSpans() {
		switch {
		case strings.HasPrefix(s.Name, "execute_tool "):
			callSpans++
		case strings.HasPrefix(s.Name, "attempt "):
			attemptSpans++
			for _, kv := range s.Attributes {
				if kv.Key == "error.type" {
					attemptKinds[kv.Value.AsString()]++
				}
			}
		}
	}
	if callSpans != len(runs) || attemptSpans != attempts {
		t.Errorf("%d call spans and %d attempt spans; want %d and %d", callSpans, attemptSpans, len(runs), attempts)
	}
	sums := metricSums(t, reader)
	if sums["toolsafe.tool.calls"] != int64(len(runs)) || sums["toolsafe.tool.attempts"] != int64(attempts) || sums["toolsafe.tool.abandoned_attempts"] != 0 {
		t.Errorf("metrics: %d calls, %d attempts, %d abandoned attempts in flight; want %d, %d and 0",
			sums["toolsafe.tool.calls"], sums["toolsafe.tool.attempts"], sums["toolsafe.tool.abandoned_attempts"], len(runs), attempts)
	}

	// The chaos did happen: attempts failed and timed out, calls were
	// retried, stopped by a Retry-After too long for them or by their
	// deadline, paused, denied and resumed; and every tool still answered.
	// (How many calls succeed depends on the machine's load: when it
	// stalls, attempts time out together and the breaker opens.)
	if attemptKinds["tool-failed"] == 0 || attemptKinds["tool-timeout"] == 0 || retried == 0 {
		t.Errorf("attempts by failure %v, %d calls retried; want failures, timeouts and retries", attemptKinds, retried)
	}
	if len(okByTool) != 4 || kinds["tool-failed"] == 0 || kinds["approval-required"] == 0 || kinds["approval-denied"] == 0 {
		t.Errorf("outcomes %v, successes by tool %v; want every tool to succeed, and failures, pauses and denials", kinds, okByTool)
	}
	if retryAfterStops == 0 || deadlineStops == 0 || len(runs) == calls {
		t.Errorf("%d calls stopped by a Retry-After, %d by their deadline, %d resumed; want some of each", retryAfterStops, deadlineStops, len(runs)-calls)
	}
	t.Logf("%d runs (%d deletes, %d resumed) by %d goroutines in %v; %d ended by their deadline; the latest return %v after its deadline, the latest timer %v; %d attempts (by failure %v), %d upstream requests; outcomes %v",
		len(runs), deleteRuns, len(runs)-calls, workers, callsDone.Round(time.Millisecond), deadlineStops, latest.Round(time.Millisecond), lag.Round(time.Millisecond),
		attempts, attemptKinds, srv.Requests(""), kinds)
}

// metricSums collects the int64 sums, each over all its data points, by
// metric name.
func metricSums(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, p := range s.DataPoints {
					sums[m.Name] += p.Value
				}
			}
		}
	}
	return sums
}
