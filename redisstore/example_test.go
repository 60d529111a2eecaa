package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/redisstore"
)

// exampleClient is a client of the Redis in REDIS_ADDR: one address is one
// Redis; several, comma-separated, are nodes of a Redis Cluster.
func exampleClient() redis.UniversalClient {
	addrs := strings.Split(os.Getenv("REDIS_ADDR"), ",")
	if len(addrs) > 1 {
		return redis.NewClusterClient(redisstore.ClusterOptions(addrs...))
	}
	return redis.NewClient(redisstore.ClientOptions(addrs[0]))
}

// newStore is what each replica does at start: a client of the Redis in
// REDIS_ADDR and a Store on it. The prefix is the example's own, so that
// it starts from nothing.
func newStore(prefix string) (*redisstore.Store, func()) {
	client := exampleClient()
	store, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		log.Fatal(err)
	}
	return store, func() { store.Close(); client.Close() }
}

// Two replicas share the breaker of the billing dependency: the failures
// of replica A open it for replica B, whose call fails at once without
// calling the upstream.
func ExampleStore_CircuitBreaker() {
	prefix := fmt.Sprintf("example-%d", time.Now().UnixNano())
	calls := 0
	fetchInvoice := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
		calls++
		return "", middleware.Transient(errors.New("billing API busy"))
	})
	replica := func() (*toolsafe.Tool, func()) {
		store, done := newStore(prefix)
		billing, err := store.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
		if err != nil {
			log.Fatal(err)
		}
		tool, err := toolsafe.New(fetchInvoice, toolsafe.WithCircuitBreaker(billing))
		if err != nil {
			log.Fatal(err)
		}
		return tool, done
	}
	a, doneA := replica()
	defer doneA()
	b, doneB := replica()
	defer doneB()

	for range 2 {
		r := a.Run(context.Background(), `{"number":"INV-1001"}`)
		fmt.Println("replica A:", r.Failure.Kind)
	}
	r := b.Run(context.Background(), `{"number":"INV-1001"}`)
	fmt.Println("replica B:", r.Failure.Kind)
	fmt.Println("upstream calls:", calls)
	// Output:
	// replica A: tool-failed
	// replica A: tool-failed
	// replica B: circuit-open
	// upstream calls: 2
}

// A refund pauses on replica A; the person approves it through replica B;
// the resumed call runs on replica A on B's grant.
func ExampleStore_Grants() {
	prefix := fmt.Sprintf("example-%d", time.Now().UnixNano())
	storeA, doneA := newStore(prefix)
	defer doneA()
	storeB, doneB := newStore(prefix)
	defer doneB()

	refund, err := toolsafe.New(middleware.Func("refund", "refunds an order", func(context.Context, string) (string, error) {
		return "refunded", nil
	}), toolsafe.WithApproval(storeA.Grants()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	_, err = refund.Call(ctx, `{"order":"A-1001","amount_eur":25}`)
	var ar *approval.Required
	fmt.Println("paused:", errors.As(err, &ar))

	approver := storeB.Grants()
	pending, err := approver.Pending(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range pending {
		fmt.Println("waiting on replica B's list:", p.Tool, p.Input)
		if err := approver.Grant(ctx, p.Tool, p.Input); err != nil {
			log.Fatal(err)
		}
	}
	out, err := refund.Call(run.Resume(ctx, ar), `{"amount_eur":25,"order":"A-1001"}`)
	fmt.Println("resumed:", out, err)
	// Output:
	// paused: true
	// waiting on replica B's list: refund {"order":"A-1001","amount_eur":25}
	// resumed: refunded <nil>
}

// A policies file says which dependency the fleet shares; the store comes
// from code, on the Redis the environment names.
func ExampleStore_policiesFile() {
	file, err := policyfile.Parse([]byte(`
dependencies:
  billing: {breaker: {failures: 5, delay: 30s}, retry_budget: 0.2, shared: redis}
tools:
  fetch_invoice: {dependency: billing, retries: 2, timeout: 2s}
`))
	if err != nil {
		log.Fatal(err)
	}
	store, done := newStore(fmt.Sprintf("example-%d", time.Now().UnixNano()))
	defer done()
	fetchInvoice := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
		return `{"number":"INV-1001","amount_eur":25}`, nil
	})
	tools, err := file.WithShared("redis", store).WrapAll(fetchInvoice)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(file.Describe("fetch_invoice"))
	out, err := tools[0].Call(context.Background(), `{"number":"INV-1001"}`)
	fmt.Println(out, err)

	// Without the store, WrapAll says what is missing.
	_, err = file.WrapAll(fetchInvoice)
	var problems *policyfile.Error
	if errors.As(err, &problems) {
		for _, p := range problems.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// surface → retry 2 (500ms..30s ×2 +25%; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → timeout 2s → tool fetch_invoice
	// {"number":"INV-1001","amount_eur":25} <nil>
	// line 3, column 68: dependencies.billing.shared: shared: redis needs a store from code: call WithShared("redis", store) on the File before WrapAll, such as a *redisstore.Store on the Redis in REDIS_ADDR
}

// The store implements what the policies file asks of a shared store.
var _ policyfile.Shared = (*redisstore.Store)(nil)

// A Store with its options spelled out: every one shown is the default but
// the prefix. The example needs a Redis in REDIS_ADDR, so it is compiled,
// not run.
func ExampleNew() {
	client := redis.NewClient(redisstore.ClientOptions(os.Getenv("REDIS_ADDR"))) // ContextTimeoutEnabled: New requires it
	defer client.Close()
	store, err := redisstore.New(client,
		redisstore.WithPrefix("agents-eu"),           // every key, and the channel of breaker changes
		redisstore.WithTimeout(50*time.Millisecond),  // every Redis operation; then the Store stops asking
		redisstore.WithRecheck(500*time.Millisecond), // the recheck that ends an outage
		redisstore.WithPermitTTL(10*time.Second),     // a half-open permit whose outcome never comes
		redisstore.WithBudgetWindow(10*time.Second),  // the retry budgets' sliding window
		redisstore.WithLogger(slog.Default()),        // one WARN per outage, one INFO when it ends
		redisstore.WithMeterProvider(otel.GetMeterProvider()),
	)
	if err != nil {
		log.Fatal(err) // every bad option is reported at once
	}
	defer store.Close() // stops the recheck, the subscription and the budgets' flushes
	fmt.Println("available:", store.Available(), "outages:", store.Outages())
}

// A Store on a Redis Cluster: the client knows some of its nodes (any of
// them will do; it learns the others), loads the slot map again every
// second and after each redirect, and never sends a script twice. An
// outage covers the master that failed; the keys of the others go on
// sharing. Compiled, not run: it needs a cluster.
func ExampleClusterOptions() {
	client := redis.NewClusterClient(redisstore.ClusterOptions("10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"))
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithPrefix("agents-eu"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	billing, err := store.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 5})
	if err != nil {
		log.Fatal(err)
	}
	fetchInvoice := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
		return `{"number":"INV-1001"}`, nil
	})
	invoice := toolsafe.Wrap(fetchInvoice, toolsafe.WithCircuitBreaker(billing))
	fmt.Println(invoice.Name())
}

// The retries of every replica share one budget: at most a fifth of the
// fleet's attempts over 10s are retries. Compiled, not run: it needs a
// Redis.
func ExampleStore_RetryBudget() {
	store, done := newStore("example-budget")
	defer done()
	budget, err := store.RetryBudget("billing", 0.2)
	if err != nil {
		log.Fatal(err)
	}
	fetchInvoice := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New("billing API busy"))
	})
	invoice := toolsafe.Wrap(fetchInvoice, toolsafe.WithRetry(policy.Retry{
		MaxRetries: 3, Backoff: policy.DefaultBackoff(), Shared: budget,
	}))
	_, err = invoice.Call(context.Background(), `{"number":"INV-1001"}`)
	fmt.Println(err) // tool-failed after its retries, or budget-exceeded once the fleet spent its share
}

// A run pauses on replica A before a refund; the refund is granted through
// replica B; the run resumes on replica B, and the note added before the
// pause is answered from the shared ledger, not added again. Compiled, not
// run: it needs a Redis.
func ExampleStore_Ledger() {
	prefix := fmt.Sprintf("example-%d", time.Now().UnixNano())
	notes := 0
	replica := func() (note, refund *toolsafe.Tool, store *redisstore.Store, done func()) {
		store, done = newStore(prefix)
		note = toolsafe.Wrap(middleware.Func("add_note", "adds a note to the order", func(context.Context, string) (string, error) {
			notes++
			return "noted", nil
		}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		refund = toolsafe.Wrap(middleware.Func("refund", "refunds an order", func(context.Context, string) (string, error) {
			return "refunded", nil
		}), toolsafe.WithApproval(store.Grants(), approval.ApproveEachAttempt))
		return note, refund, store, done
	}
	noteA, refundA, storeA, doneA := replica()
	defer doneA()
	noteB, refundB, storeB, doneB := replica()
	defer doneB()

	ctx := run.With(context.Background(), "run-A-1001", storeA.Ledger())
	_, _ = noteA.Call(ctx, `{"order":"A-1001","text":"refund asked"}`)
	_, err := refundA.Call(ctx, `{"order":"A-1001"}`)
	var ar *approval.Required
	if !errors.As(err, &ar) {
		log.Fatal(err)
	}
	if err := storeB.Grants().Grant(context.Background(), ar.Tool, ar.Input); err != nil {
		log.Fatal(err)
	}

	// Replica B resumes the run on its own Store's ledger: the same Redis list.
	resumed := run.Resume(run.With(context.Background(), "", storeB.Ledger()), ar)
	_, _ = noteB.Call(resumed, `{"order":"A-1001","text":"refund asked"}`)
	out, err := refundB.Call(resumed, `{"order":"A-1001"}`)
	fmt.Println(out, err, "notes added:", notes) // refunded <nil> notes added: 1
}

// go-redis logs on its own, process-wide (during an outage, "connection
// pool: failed to dial" twice a second per client); send its lines to your
// logger at DEBUG, once, at the start of the program. Here the default
// logger, which drops DEBUG, quiets them; a logger at DEBUG shows one.
func ExampleLogger() {
	redis.SetLogger(redisstore.Logger(slog.Default(), slog.LevelDebug))

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output
			}
			return a
		},
	}))
	redisstore.Logger(logger, slog.LevelDebug).Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %s", 5, "connection refused")
	// Output:
	// level=DEBUG msg="go-redis: connection pool: failed to dial after 5 attempts: connection refused" component=go-redis
}
