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

	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	calls      = 5000 // logical calls, not counting resumed ones
	workers    = 50   // goroutines making them
	maxRetries = 3
	seed       = 20261129
	// stubbornCap is the most abandoned attempts of the stubborn tool that
	// may still run at once.
	stubbornCap = 3
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
// by Run, destructive invocations and alternatives' runs by operation, the
// half-open probes at the upstream at once, and abandoned attempts of the
// stubborn tool still running.
type counts struct {
	mu          sync.Mutex
	invocations map[int]int
	results     map[int]int
	deletes     map[string]int
	alternative map[string]int // "tool op" → runs of an alternative
	probes      sync.Map       // call ID → the next attempt is a half-open probe
	probing     int
	mostProbing int
	stuck       int   // abandoned attempts of the stubborn tool still running
	mostStuck   int   // the most at once
	allowed     int   // the most the cap allows: its own, or the attempts in flight when one first got stuck
	inFlight    int64 // stubborn invocations running
}

// observe is a middleware that follows each call's events: half-open
// probes (so the tool can count the probes it serves at once) and the
// stubborn tool's abandoned attempts.
func (c *counts) observe(next tools.Tool) tools.Tool {
	return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
		id, stubborn := middleware.CallID(ctx), next.Name() == "stubborn"
		call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
			switch e.(type) {
			case call.BreakerProbe:
				c.probes.Store(id, true)
			case call.AttemptAbandoned:
				if !stubborn {
					return // an HTTP tool slower than the grace to notice its context
				}
				c.mu.Lock()
				if c.stuck == 0 {
					c.allowed = max(c.allowed, stubbornCap, int(c.inFlight))
				}
				c.stuck++
				c.mostStuck = max(c.mostStuck, c.stuck)
				c.mu.Unlock()
			case call.AbandonedReturned:
				if stubborn {
					c.mu.Lock()
					c.stuck--
					c.mu.Unlock()
				}
			}
		}))
		return next.Call(ctx, input)
	})
}

// probe counts an invocation that is a half-open probe until done is
// called.
func (c *counts) probe(ctx context.Context) (done func()) {
	if _, ok := c.probes.LoadAndDelete(middleware.CallID(ctx)); !ok {
		return func() {}
	}
	c.mu.Lock()
	c.probing++
	c.mostProbing = max(c.mostProbing, c.probing)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.probing--
		c.mu.Unlock()
	}
}

// alternativeTool is the plain alternative of a tool: it counts its runs
// by operation, and answers.
func (c *counts) alternativeTool(name string) tools.Tool {
	return middleware.Func(name, "chaos test alternative "+name, func(ctx context.Context, op string) (string, error) {
		c.mu.Lock()
		c.alternative[name+" "+op]++
		c.mu.Unlock()
		return name + " " + op, nil
	})
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
		defer seen.probe(ctx)()
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
		return middleware.DoHTTP(client, req)
	})
}

// toolRun is one Run of a tool and what came of it.
type toolRun struct {
	id       int
	tool     string
	path     string // the upstream path of its operation, op appended
	op       string
	deadline time.Duration
	elapsed  time.Duration
	result   middleware.Result
}

// TestChaos runs thousands of calls from many goroutines through every
// layer (retries with Retry-After, attempt timeout, deadline, a shared
// breaker, bulkhead and retry budget, tracing and metrics, side effects
// with idempotency keys, a destructive tool behind an approval gate)
// against an upstream that fails at random, and checks what must hold
// whatever the faults: one result per call, given back while the requests
// that hang are still held (the deadline and the attempt timeout, not the
// upstream, end them); never more attempts than allowed; no side effect
// applied twice; no destructive attempt without a grant of its own; no
// goroutine left behind. It asserts no speed: how long after its deadline
// a call returns is the machine's business, and only logged.
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

	seen := &counts{invocations: map[int]int{}, results: map[int]int{}, deletes: map[string]int{}, alternative: map[string]int{}}
	breaker := policy.NewCircuitBreaker("upstream", policy.Breaker{FailureThreshold: 5, Delay: 10 * time.Millisecond, Probes: 2})
	bulkhead := policy.NewBulkhead("upstream", 12, 25*time.Millisecond)
	retryBudget := budget.NewBuilder().WithMaxRate(0.2).Build()
	grants := approval.NewGrants()
	// common[:2] (the retry and the attempt timeout) is for the tools of
	// the upstream; stubborn sets its own, as a guard is set once.
	common := []toolsafe.Option{
		toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Backoff{
			Base: 5 * time.Millisecond, Max: 40 * time.Millisecond, Multiplier: 2, Jitter: 0.5}, Budget: retryBudget}),
		toolsafe.WithTimeout(100 * time.Millisecond),
		toolsafe.WithCircuitBreaker(breaker),
		toolsafe.WithBulkhead(bulkhead),
		toolsafe.WithTracing(hook),
		toolsafe.WithLogger(slog.New(slog.DiscardHandler)),
		toolsafe.WithOnResult(func(ctx context.Context, _ middleware.Result) { seen.add(seen.results, runOf(ctx)) }),
		toolsafe.With(seen.observe),
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
	// A charge that fails for good goes to a queue for later, unless it may
	// have landed; a delete to an archive, behind the same gate.
	charge := wrap("charge", http.MethodPost, "/charge/", 600*time.Millisecond,
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithFallback(fallback.To(seen.alternativeTool("charge_later"))))
	remove := wrap("delete_record", http.MethodPost, "/delete/", 800*time.Millisecond,
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithFallback(fallback.To(seen.alternativeTool("archive_delete"))))
	// A tool that ignores its context half the time, so the attempt timeout
	// abandons it: at most stubbornCap of its attempts are left running.
	var stubbornRuns atomic.Int64
	stubbornTool := middleware.Func("stubborn", "chaos test tool stubborn", func(ctx context.Context, op string) (string, error) {
		seen.add(seen.invocations, runOf(ctx))
		seen.mu.Lock()
		seen.inFlight++
		seen.mu.Unlock()
		defer func() {
			seen.mu.Lock()
			seen.inFlight--
			seen.mu.Unlock()
		}()
		if stubbornRuns.Add(1)%2 == 0 {
			time.Sleep(60 * time.Millisecond) // ignores ctx
		}
		return "stubborn " + op, nil
	})
	stubborn, err := toolsafe.New(stubbornTool, append(slices.Clip(common[2:]), // its own retry and attempt timeout
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Constant(time.Millisecond), Budget: retryBudget}),
		toolsafe.WithTimeout(5*time.Millisecond, policy.MaxAbandoned(stubbornCap)), toolsafe.WithDeadline(300*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	stubbornW := wrapped{stubborn, 300 * time.Millisecond, "/stubborn/"}

	var (
		mu      sync.Mutex
		runs    []toolRun
		granted = map[string]int{} // "tool op" → grants issued
		nextRun atomic.Int64
	)
	do := func(ctx context.Context, w wrapped, op string) middleware.Result {
		id := int(nextRun.Add(1))
		start := time.Now()
		r := w.tool.Run(context.WithValue(ctx, runKey{}, id), op)
		elapsed := time.Since(start) // logged, never asserted
		mu.Lock()
		runs = append(runs, toolRun{id: id, tool: w.tool.Name(), path: w.path + op, op: op, deadline: w.deadline,
			elapsed: elapsed, result: r})
		mu.Unlock()
		return r
	}
	grantTo := func(tool, op string) {
		grants.Grant(tool, op)
		mu.Lock()
		granted[tool+" "+op]++
		mu.Unlock()
	}
	grant := func(op string) { grantTo("delete_record", op) }

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
				case 0, 1, 2:
					do(ctx, lookup, fmt.Sprintf("r-%d", i))
				case 3:
					if i%20 == 3 {
						// A caller that gives up early: its cancellation
						// turns no span red and counts against nothing.
						cctx, cancel := context.WithTimeout(ctx, 15*time.Millisecond)
						do(cctx, lookup, fmt.Sprintf("r-%d", i))
						cancel()
					} else {
						do(ctx, stubbornW, fmt.Sprintf("s-%d", i))
					}
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
						grantTo("archive_delete", op) // its fallback may run, once
					}
					r := do(ctx, remove, op)
					// A retry that waits for its own approval gets it once,
					// and the call is resumed with its idempotency key.
					var ar *approval.Required
					if r.Failure != nil && errors.As(r.Failure, &ar) && ar.Attempt > 1 && ar.Tool == "delete_record" {
						grant(op)
						do(run.Resume(ctx, ar), remove, op)
					}
				}
			}
		})
	}
	// Every call returns although the upstream holds its hung requests
	// until Release, below: no call waited for a hung attempt. (A call that
	// did would hang here, and the test time out.)
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
		"budget-exceeded": true, "approval-required": true, "approval-denied": true, "canceled": true,
	}
	attempts, retried, retryAfterStops, deadlineStops := 0, 0, 0, 0
	latest := time.Duration(math.MinInt64) // the latest return after a deadline
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
		latest = max(latest, r.elapsed-r.deadline)
		if res.Failure != nil && res.Failure.Kind == middleware.KindTimeout && res.Failure.Timeout == r.deadline {
			deadlineStops++
		}
		if res.Attempts > maxRetries+1 {
			t.Errorf("%s: more than %d attempts", what, maxRetries+1)
		}
		// Once every abandoned attempt has finished, the tool ran exactly
		// once per attempt the call counted.
		if n := seen.invocations[r.id]; n != res.Attempts {
			t.Errorf("%s: the tool ran %d times", what, n)
		}
		// No route after an outcome that may have landed: an alternative
		// runs only for a call whose primary applied nothing.
		if res.Fallback != "" && (res.Primary == nil || res.Primary.SideEffect == middleware.SideEffectUnknown) {
			t.Errorf("%s: routed to %s after %+v", what, res.Fallback, res.Primary)
		}
		if r.tool == "charge" && seen.alternative["charge_later "+r.op] > 0 && book.applied[r.op] > 0 {
			t.Errorf("%s: charged upstream and queued for later too", what)
		}
		if r.tool != "delete_record" && r.tool != "stubborn" {
			// One Run per operation: its requests are its attempts.
			if n := srv.Requests(r.path); n > maxRetries+1 {
				t.Errorf("%s: the upstream got %d requests", what, n)
			}
		}
		if obs := res.Observation(); res.Status() == "error" && kind != "canceled" {
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
		if n, g := seen.deletes[r.op], granted["delete_record "+r.op]; n > g {
			t.Errorf("delete %s ran %d times on %d grants", r.op, n, g)
		}
		if n, g := srv.Requests(r.path), granted["delete_record "+r.op]; n > g {
			t.Errorf("delete %s reached the upstream %d times on %d grants", r.op, n, g)
		}
		// No gated alternative without a gate: the archive ran only on a
		// grant of its own.
		if n, g := seen.alternative["archive_delete "+r.op], granted["archive_delete "+r.op]; n > g {
			t.Errorf("archive_delete %s ran %d times on %d grants", r.op, n, g)
		}
	}
	mu.Unlock()

	// Half-open probes bounded, abandoned attempts bounded.
	if seen.mostProbing > 2 {
		t.Errorf("%d half-open probes at the upstream at once; want at most Probes = 2", seen.mostProbing)
	}
	// The new invariants were put to the test: calls fell back, probes ran.
	fellBack := map[string]int{}
	for k, n := range seen.alternative {
		fellBack[strings.Fields(k)[0]] += n
	}
	if fellBack["charge_later"] == 0 || seen.mostProbing == 0 {
		t.Errorf("alternatives ran %v, at most %d probes at once; want fallbacks and probes", fellBack, seen.mostProbing)
	}
	t.Logf("alternatives ran %v; at most %d half-open probes at once; at most %d stuck attempts of the stubborn tool (allowed %d)",
		fellBack, seen.mostProbing, seen.mostStuck, seen.allowed)

	// The cap binds once an attempt is stuck: past it only the attempts
	// already in flight then may join them.
	if seen.mostStuck > seen.allowed || seen.mostStuck == 0 {
		t.Errorf("%d abandoned attempts of the stubborn tool running at once; want some, and at most %d (its cap of %d, or what was in flight when one first got stuck)",
			seen.mostStuck, seen.allowed, stubbornCap)
	}

	// The telemetry agrees: a call span per call (the alternatives' calls
	// have their own), an attempt span per attempt, every call counted, no
	// abandoned attempt still in flight; and the caller's cancellation
	// turned no span red.
	all := spans.GetSpans()
	primary := map[string]tracetest.SpanStub{} // call span ID → span of a Run
	byCallID := map[string]tracetest.SpanStub{}
	runTools := map[string]bool{"lookup": true, "quick_lookup": true, "charge": true, "delete_record": true, "stubborn": true}
	callSpans, attemptSpans, primaryAttempts := 0, 0, 0
	attemptKinds := map[string]int{}
	for _, s := range all {
		if strings.HasPrefix(s.Name, "execute_tool ") {
			callSpans++
			if runTools[strings.TrimPrefix(s.Name, "execute_tool ")] && !s.Parent.IsValid() {
				primary[s.SpanContext.SpanID().String()] = s
				for _, kv := range s.Attributes {
					if kv.Key == otelhook.CallIDKey {
						byCallID[kv.Value.AsString()] = s
					}
				}
			}
		}
	}
	for _, s := range all {
		if !strings.HasPrefix(s.Name, "attempt ") {
			continue
		}
		attemptSpans++
		if _, ok := primary[s.Parent.SpanID().String()]; ok {
			primaryAttempts++
		}
		for _, kv := range s.Attributes {
			if kv.Key == "error.type" {
				attemptKinds[kv.Value.AsString()]++
			}
		}
	}
	if len(primary) != len(runs) || primaryAttempts != attempts {
		t.Errorf("%d call spans of the Runs, with %d attempt spans; want %d and %d", len(primary), primaryAttempts, len(runs), attempts)
	}
	canceled := 0
	for _, r := range runs {
		if r.result.Failure == nil || r.result.Failure.Kind != middleware.KindCanceled {
			continue
		}
		canceled++
		s, ok := byCallID[r.result.CallID]
		if !ok {
			t.Errorf("run %d: no call span for call %s", r.id, r.result.CallID)
			continue
		}
		if s.Status.Code == codes.Error {
			t.Errorf("run %d: the caller's cancellation turned its call span red: %v", r.id, s.Status)
		}
		for _, a := range all {
			if a.Parent.SpanID() == s.SpanContext.SpanID() && a.Status.Code == codes.Error && strings.HasPrefix(a.Name, "attempt ") {
				for _, kv := range a.Attributes {
					if kv.Key == "error.type" && kv.Value.AsString() == "canceled" {
						t.Errorf("run %d: a canceled attempt span is red", r.id)
					}
				}
			}
		}
	}
	sums := metricSums(t, reader)
	if sums["toolsafe.tool.calls"] != int64(callSpans) || sums["toolsafe.tool.attempts"] != int64(attemptSpans) || sums["toolsafe.tool.abandoned_attempts"] != 0 {
		t.Errorf("metrics: %d calls, %d attempts, %d abandoned attempts in flight; want %d, %d and 0",
			sums["toolsafe.tool.calls"], sums["toolsafe.tool.attempts"], sums["toolsafe.tool.abandoned_attempts"], callSpans, attemptSpans)
	}

	// The chaos did happen: attempts failed and timed out, calls were
	// retried, stopped by a Retry-After too long for them or by their
	// deadline, paused, denied and resumed; and every tool still answered.
	// (How many calls succeed depends on the machine's load: when it
	// stalls, attempts time out together and the breaker opens.)
	if attemptKinds["tool-failed"] == 0 || attemptKinds["tool-timeout"] == 0 || retried == 0 {
		t.Errorf("attempts by failure %v, %d calls retried; want failures, timeouts and retries", attemptKinds, retried)
	}
	if len(okByTool) != 5 || kinds["tool-failed"] == 0 || kinds["approval-required"] == 0 || kinds["approval-denied"] == 0 {
		t.Errorf("outcomes %v, successes by tool %v; want every tool to succeed, and failures, pauses and denials", kinds, okByTool)
	}
	if retryAfterStops == 0 || deadlineStops == 0 || len(runs) == calls {
		t.Errorf("%d calls stopped by a Retry-After, %d by their deadline, %d resumed; want some of each", retryAfterStops, deadlineStops, len(runs)-calls)
	}
	t.Logf("%d runs (%d deletes, %d resumed) by %d goroutines in %v; %d ended by their deadline; the latest return %v after its deadline; %d attempts (by failure %v), %d upstream requests; outcomes %v",
		len(runs), deleteRuns, len(runs)-calls, workers, callsDone.Round(time.Millisecond), deadlineStops, latest.Round(time.Millisecond),
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
