package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// Each replica loads the same policies file and gives it its own store:
// the dependency's breaker and budget are the fleet's.
func TestPoliciesFileSharesADependencyAcrossReplicas(t *testing.T) {
	const policies = `
dependencies:
  billing: {breaker: {failures: 3, delay: 1m}, retry_budget: 0.5, shared: redis}
tools:
  fetch_invoice: {dependency: billing, retries: 1, backoff: {base: 0, multiplier: 1}}
`
	rs := newReplicas(t, redisAddr, 2)
	var calls atomic.Int32
	fetch := middleware.Func("fetch_invoice", "fetches an invoice", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "", middleware.Transient(errors.New("billing API busy"))
	})
	run := func(i int) middleware.Result {
		file, err := policyfile.Parse([]byte(policies))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := file.WithShared("redis", rs[i].store).WrapAll(fetch)
		if err != nil {
			t.Fatal(err)
		}
		return ts.Lookup("fetch_invoice").Run(background, `{"number":"INV-1"}`)
	}
	// Replica 0: two attempts (a retry the fleet's budget admits, as the
	// minimum). Replica 1: a third failure opens the fleet's breaker; its
	// retry is refused by it.
	if r := run(0); r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Attempts != 2 {
		t.Fatalf("replica 0: %+v", r)
	}
	r := run(1)
	if r.Failure == nil || calls.Load() != 3 {
		t.Fatalf("replica 1: %+v after %d calls; want the third failure to open the fleet's breaker", r, calls.Load())
	}
	if r := run(0); r.Failure == nil || r.Failure.Kind != middleware.KindCircuitOpen || calls.Load() != 3 {
		t.Fatalf("replica 0 after the fleet's third failure: %+v (%d calls), want circuit-open", r, calls.Load())
	}
}
