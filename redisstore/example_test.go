package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/redisstore"
)

// newStore is what each replica does at start: a client of the Redis in
// REDIS_ADDR and a Store on it. The prefix is the example's own, so that
// it starts from nothing.
func newStore(prefix string) (*redisstore.Store, func()) {
	client := redis.NewClient(redisstore.ClientOptions(os.Getenv("REDIS_ADDR")))
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
	// surface → retry 2 (500ms..30s ×2 +25%; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → timeout 2s
	// {"number":"INV-1001","amount_eur":25} <nil>
	// line 3, column 68: dependencies.billing.shared: shared: redis needs a store from code: call WithShared("redis", store) on the File before WrapAll, such as a *redisstore.Store on the Redis in REDIS_ADDR
}

// The store implements what the policies file asks of a shared store.
var _ policyfile.Shared = (*redisstore.Store)(nil)
