package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

func budgets(t *testing.T, rs []*replica, ratio float64) []*redisstore.Budget {
	t.Helper()
	out := make([]*redisstore.Budget, len(rs))
	for i, r := range rs {
		b, err := r.store.NewBudget("billing", ratio)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func TestBudgetCountsTheFleetsAttempts(t *testing.T) {
	rs := newReplicas(t, redisAddr, 3, redisstore.WithBudgetMinRetries(1))
	bs := budgets(t, rs, 0.25)
	// Replica 0 makes 40 first attempts, and one retry, which carries its
	// count to Redis.
	for range 40 {
		if !bs[0].Admit(background, false) {
			t.Fatal("a first attempt was refused")
		}
	}
	if !bs[0].Admit(background, true) {
		t.Fatal("the first retry was refused")
	}
	// Replicas 1 and 2 made no attempt of their own: their retries are
	// admitted from the fleet's. Retries ≤ 0.25 × (40 + retries) allows 13.
	admitted := 1
	for i := range 40 {
		if bs[1+i%2].Admit(background, true) {
			admitted++
		}
	}
	if admitted != 13 {
		t.Errorf("%d retries admitted fleet-wide for 40 first attempts at ratio 0.25, want 13", admitted)
	}
	for i, b := range bs {
		if !b.Shared() {
			t.Errorf("replica %d decided alone with Redis up", i)
		}
	}
}

func TestBudgetAdmitsTheMinimumWhateverTheRatio(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	bs := budgets(t, rs, 0.01)
	admitted := 0
	for i := range 10 {
		if bs[i%2].Admit(background, true) {
			admitted++
		}
	}
	if admitted != redisstore.DefaultBudgetMinRetries {
		t.Errorf("%d retries admitted with no attempts, want the minimum, %d", admitted, redisstore.DefaultBudgetMinRetries)
	}
}

func TestBudgetWindowSlides(t *testing.T) {
	const window = 200 * time.Millisecond
	rs := newReplicas(t, redisAddr, 1, redisstore.WithBudgetWindow(window), redisstore.WithBudgetMinRetries(1))
	bs := budgets(t, rs, 0.5)
	for range 4 {
		bs[0].Admit(background, false)
	}
	// 4 first attempts: retries ≤ 0.5 × (4 + retries) allows up to 4 while
	// they are in the window (fewer on a machine so busy that some aged
	// out already: the exact count is TestBudgetCountsTheFleetsAttempts',
	// on the default 10s window).
	n := 0
	for bs[0].Admit(background, true) {
		n++
	}
	if n < 1 || n > 4 {
		t.Fatalf("%d retries for 4 attempts at ratio 0.5, want 1 to 4", n)
	}
	time.Sleep(window) // the window's own length: the counts age out
	if !bs[0].Admit(background, true) {
		t.Fatal("the minimum retry was refused after the window slid past the old counts")
	}
	if bs[0].Admit(background, true) {
		t.Fatal("a second retry with no attempt in the window")
	}
}

func TestBudgetDecidesLocallyWhileRedisIsDown(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithRecheck(20*time.Millisecond), redisstore.WithBudgetMinRetries(1))
	bs := budgets(t, rs, 0.25)
	srv.Kill()
	for range 8 {
		bs[0].Admit(background, false)
	}
	// Replica 0 alone: retries ≤ 0.25 × (8 + retries) allows 2.
	n := 0
	for range 5 {
		start := time.Now()
		if bs[0].Admit(background, true) {
			n++
		}
		if d := time.Since(start); d > time.Second { // it never waits for a dead Redis: far less than this on any machine
			t.Errorf("a decision took %v with Redis down", d)
		}
	}
	if n != 2 || bs[0].Shared() {
		t.Fatalf("%d local retries for 8 local attempts at ratio 0.25 (shared %v), want 2 decided locally", n, bs[0].Shared())
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	// The counts of the outage (8 attempts, 2 retries) reach Redis with the
	// next operation: with 4 more attempts, retries ≤ 0.25 × (12 + retries)
	// allows 4, so 2 more. Without them it would allow 1 (the minimum).
	for range 4 {
		bs[0].Admit(background, false)
	}
	if !bs[0].Admit(background, true) || !bs[0].Shared() {
		t.Fatal("no shared retry after Redis returned")
	}
	if !bs[1].Admit(background, true) {
		t.Error("replica 1 was refused the 4th retry of the fleet: the outage's counts did not reach Redis")
	}
	if bs[1].Admit(background, true) {
		t.Error("replica 1 was admitted a 5th retry, past the ratio")
	}
}

func TestBudgetThroughToolsafe(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2, redisstore.WithBudgetMinRetries(1))
	var calls atomic.Int32
	wrap := func(r *replica) *toolsafe.Tool {
		b, err := r.store.RetryBudget("billing", 0.2)
		if err != nil {
			t.Fatal(err)
		}
		tool := middleware.Func("fetch_invoice", "fetches an invoice", func(ctx context.Context, _ string) (string, error) {
			calls.Add(1)
			return "", middleware.Transient(errors.New("billing API busy"))
		})
		w, err := toolsafe.New(tool, toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0), Shared: b}))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a, b := wrap(rs[0]), wrap(rs[1])
	kinds := map[middleware.Kind]int{}
	for i := range 20 {
		w := a
		if i%2 == 1 {
			w = b
		}
		r := w.Run(background, `{"n":`+strconv.Itoa(i)+`}`)
		kinds[r.Failure.Kind]++
	}
	// 20 calls make 20 first attempts; retries ≤ 0.2 × attempts.
	retries := int(calls.Load()) - 20
	if retries > 5 || retries < 1 {
		t.Errorf("%d retries for 20 calls at ratio 0.2 fleet-wide, want 1 to 5", retries)
	}
	if kinds[middleware.KindBudget] == 0 {
		t.Errorf("no call ended with budget-exceeded: %v", kinds)
	}
}

func TestBudgetRefusesWhatCannotWork(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	for _, ratio := range []float64{0, -0.1, 1.5} {
		if _, err := rs[0].store.RetryBudget("billing", ratio); err == nil {
			t.Errorf("ratio %v: no error", ratio)
		}
	}
	if _, err := rs[0].store.RetryBudget("", 0.2); err == nil {
		t.Error("no dependency: no error")
	}
}
