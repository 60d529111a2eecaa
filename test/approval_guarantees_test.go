//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Regression: an approval given at one gate let a second gate on the same
// tool skip its approver, so the refund ran though grants was never asked.
func TestStackedGatesEachAskTheirOwnApprover(t *testing.T) {
	var ran atomic.Int32
	auditor := &testkit.Approver{Decision: approval.Approved}
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(testkit.Done("refund", &ran),
		toolsafe.WithApproval(grants),
		toolsafe.With(approval.Gate(auditor, approval.ApproveCall)))

	_, err := refund.Call(context.Background(), `{"order":"A-1"}`)
	testkit.Paused(t, err)
	if ran.Load() != 0 || len(auditor.Asked()) != 1 || len(grants.Pending()) != 1 {
		t.Fatalf("ran %d, auditor asked %d, grants pending %d; want 0, 1, 1: the auditor's approval is not grants'",
			ran.Load(), len(auditor.Asked()), len(grants.Pending()))
	}
	grants.Grant("refund", `{"order":"A-1"}`)
	if out, err := refund.Call(context.Background(), `{"order":"A-1"}`); out != "done" || err != nil || ran.Load() != 1 {
		t.Fatalf("with both approvals: %q, %v, ran %d; want done once", out, err, ran.Load())
	}
}

// Regression: a Gate inside a composite tool skipped its approver because
// the outer tool's call record, in ctx, said it was approved.
func TestAGateInsideACompositeToolAsksItsOwnApprover(t *testing.T) {
	var ran atomic.Int32
	auditor := &testkit.Approver{Decision: approval.Pending}
	inner := approval.Gate(auditor, approval.ApproveCall)(testkit.Done("refund", &ran))
	outer := toolsafe.Wrap(middleware.Func("refund_all", "", func(ctx context.Context, input string) (string, error) {
		return inner.Call(ctx, input) // on the outer call's context
	}), toolsafe.WithApproval(&testkit.Approver{Decision: approval.Approved}))

	_, err := outer.Call(context.Background(), `{"order":"A-1"}`)
	if ar := testkit.Paused(t, err); ar.Tool != "refund" {
		t.Fatalf("paused %q; want the inner refund's gate", ar.Tool)
	}
	if ran.Load() != 0 || len(auditor.Asked()) != 1 {
		t.Fatalf("ran %d, the inner approver asked %d times; want 0 and 1", ran.Load(), len(auditor.Asked()))
	}
}

// Regression: a gated tool whose breaker was open fell back to a plain tool
// that ran with no approver asked: the breaker refused before the gate, and
// the plain alternative had no gate.
func TestAFallbackOfAGatedToolPassesTheSameGate(t *testing.T) {
	openBreaker := func() *policy.CircuitBreaker {
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
		cb.Open()
		return cb
	}
	t.Run("a plain alternative asks the primary's approver about itself", func(t *testing.T) {
		var primaryRan, altRan atomic.Int32
		approver := &testkit.Approver{Decision: approval.Pending}
		refund := toolsafe.Wrap(testkit.Done("refund", &primaryRan),
			toolsafe.WithApproval(approver), toolsafe.WithCircuitBreaker(openBreaker()),
			toolsafe.WithFallback(fallback.To(testkit.Done("manual_refund", &altRan))))
		_, err := refund.Call(context.Background(), `{"order":"A-1"}`)
		if ar := testkit.Paused(t, err); ar.Tool != "refund" {
			t.Fatalf("paused %q; want refund's own gate first", ar.Tool)
		}
		if primaryRan.Load() != 0 || altRan.Load() != 0 {
			t.Fatalf("ran primary %d, alternative %d; want neither", primaryRan.Load(), altRan.Load())
		}

		// Approved for the primary, refused by its breaker: the alternative
		// is asked about on its own.
		grants := approval.NewGrants()
		grants.Grant("refund", `{"order":"A-1"}`)
		refund = toolsafe.Wrap(testkit.Done("refund", &primaryRan),
			toolsafe.WithApproval(grants), toolsafe.WithCircuitBreaker(openBreaker()),
			toolsafe.WithFallback(fallback.To(testkit.Done("manual_refund", &altRan))))
		_, err = refund.Call(context.Background(), `{"order":"A-1"}`)
		if ar := testkit.Paused(t, err); ar.Tool != "manual_refund" || ar.Input != `{"order":"A-1"}` {
			t.Fatalf("paused %q with %q; want the alternative, asked about its own name and input", ar.Tool, ar.Input)
		}
		if altRan.Load() != 0 {
			t.Fatalf("the alternative ran %d times without its approval", altRan.Load())
		}
		grants.Grant("refund", `{"order":"A-1"}`)
		grants.Grant("manual_refund", `{"order":"A-1"}`)
		if r := refund.Run(context.Background(), `{"order":"A-1"}`); r.Status() != "ok" || r.Fallback != "manual_refund" || altRan.Load() != 1 {
			t.Fatalf("with both grants: %q via %q, the alternative ran %d; want ok via manual_refund, once", r.Status(), r.Fallback, altRan.Load())
		}
	})

	t.Run("a wrapped alternative without a gate gets the primary's", func(t *testing.T) {
		var altRan atomic.Int32
		refund := toolsafe.Wrap(testkit.Done("refund", new(atomic.Int32)),
			toolsafe.WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
				return approval.Approved, nil
			})),
			toolsafe.WithCircuitBreaker(openBreaker()),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Done("manual_refund", &altRan)))))
		r := refund.Run(context.Background(), `{"order":"A-1"}`)
		if r.Status() != "ok" || altRan.Load() != 1 {
			t.Fatalf("%q, alternative ran %d; want ok through the primary's approver, once", r.Status(), altRan.Load())
		}

		grants := approval.NewGrants()
		grants.Grant("refund", `{"order":"A-1"}`)
		refund = toolsafe.Wrap(testkit.Done("refund", new(atomic.Int32)),
			toolsafe.WithApproval(grants), toolsafe.WithCircuitBreaker(openBreaker()),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Done("manual_refund", &altRan)))))
		_, err := refund.Call(context.Background(), `{"order":"A-1"}`)
		if ar := testkit.Paused(t, err); ar.Tool != "manual_refund" {
			t.Fatalf("paused %q; want the ungated alternative behind the primary's gate", ar.Tool)
		}
		if altRan.Load() != 1 {
			t.Fatalf("the alternative ran %d times; want still 1", altRan.Load())
		}
	})

	// Regression: a destructive primary's gate could not be put in front of
	// an alternative declared free of side effects (destructive and
	// NoSideEffects contradict), so the alternative ran with no gate.
	t.Run("a wrapped alternative free of side effects still passes a destructive primary's gate", func(t *testing.T) {
		var altRan atomic.Int32
		grants := approval.NewGrants()
		grants.Grant("refund", `{"order":"A-1"}`)
		failing := middleware.Func("refund", "", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("the order has no payment")
		})
		refund := toolsafe.Wrap(failing, toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
			toolsafe.WithFallback(fallback.To(toolsafe.Wrap(testkit.Done("manual_refund", &altRan),
				toolsafe.WithSideEffects(middleware.NoSideEffects)))))
		_, err := refund.Call(context.Background(), `{"order":"A-1"}`)
		if ar := testkit.Paused(t, err); ar.Tool != "manual_refund" || altRan.Load() != 0 {
			t.Fatalf("paused %q, the alternative ran %d; want it paused at the primary's gate, not run", ar.Tool, altRan.Load())
		}
		if p := grants.Pending(); len(p) != 1 || p[0].Tool != "manual_refund" {
			t.Fatalf("pending %v; want the alternative's approval asked for", p)
		}
	})
}

// Regression: with a bulkhead of 1 and a slow approver, another tool of the
// same dependency got tool-busy with nothing in flight, because the gate
// waited while holding the permit.
func TestAnApprovalWaitHoldsNoPermit(t *testing.T) {
	t.Run("no bulkhead slot", func(t *testing.T) {
		slots := policy.NewBulkhead("billing", 1, 0)
		asked, release := make(chan struct{}), make(chan struct{})
		slow := approval.ApproverFunc(func(ctx context.Context, _ approval.CallInfo) (approval.Decision, error) {
			close(asked)
			<-release
			return approval.Approved, nil
		})
		var refunds, lookups atomic.Int32
		refund := toolsafe.Wrap(testkit.Done("refund", &refunds), toolsafe.WithApproval(slow), toolsafe.WithBulkhead(slots))
		lookup := toolsafe.Wrap(testkit.Done("lookup", &lookups), toolsafe.WithBulkhead(slots))
		done := make(chan middleware.Result, 1)
		go func() { done <- refund.Run(context.Background(), "A-1") }()
		<-asked
		if r := lookup.Run(context.Background(), "A-1"); r.Status() != "ok" || lookups.Load() != 1 {
			t.Errorf("lookup while the refund waits for a person: %q (%v); want ok: the wait holds no slot", r.Status(), r.Kind())
		}
		close(release)
		if r := <-done; r.Status() != "ok" || refunds.Load() != 1 {
			t.Errorf("refund after approval: %q; want ok", r.Status())
		}
	})

	t.Run("no half-open probe", func(t *testing.T) {
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Millisecond, Probes: 1})
		cb.Open()
		testkit.HalfOpen(cb)
		asked, release := make(chan struct{}), make(chan struct{})
		slow := approval.ApproverFunc(func(ctx context.Context, _ approval.CallInfo) (approval.Decision, error) {
			close(asked)
			<-release
			return approval.Approved, nil
		})
		var lookups atomic.Int32
		refund := toolsafe.Wrap(testkit.Done("refund", new(atomic.Int32)), toolsafe.WithApproval(slow), toolsafe.WithCircuitBreaker(cb))
		lookup := toolsafe.Wrap(testkit.Done("lookup", &lookups), toolsafe.WithCircuitBreaker(cb))
		done := make(chan middleware.Result, 1)
		go func() { done <- refund.Run(context.Background(), "A-1") }()
		<-asked
		if r := lookup.Run(context.Background(), "A-1"); r.Status() != "ok" || !cb.IsClosed() {
			t.Errorf("the probe while the refund waits for a person: %q (%v), breaker %v; want ok and closed", r.Status(), r.Kind(), cb.State())
		}
		close(release)
		<-done
	})
}

// Regression: a grant was bound to the input's exact bytes, so a call
// re-planned with the same arguments in another key order paused again
// (and got a new idempotency key), and the unused grant stayed forever.
func TestGrantsMatchTheSameJSONAndExpire(t *testing.T) {
	var ran atomic.Int32
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))

	_, err := refund.Call(context.Background(), `{"order":"A-1","amount_eur":25}`)
	ar := testkit.Paused(t, err)
	grants.Grant(ar.Tool, ar.Input)
	ctx := run.Resume(context.Background(), ar)
	var key string
	spy := toolsafe.Wrap(middleware.Func("refund", "", func(ctx context.Context, _ string) (string, error) {
		key = middleware.IdempotencyKey(ctx)
		ran.Add(1)
		return "done", nil
	}), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	if out, err := spy.Call(ctx, "{ \"amount_eur\": 25,\n  \"order\": \"A-1\" }"); out != "done" || err != nil {
		t.Fatalf("the re-planned call: %q, %v; want it to match its grant", out, err)
	}
	if key != ar.IdempotencyKey {
		t.Errorf("the resumed call's key %q; want the paused call's %q", key, ar.IdempotencyKey)
	}

	now := time.Now()
	expiring := &approval.Grants{TTL: time.Minute, Now: func() time.Time { return now }}
	expiring.Grant("refund", `{"order":"A-2"}`)
	now = now.Add(2 * time.Minute)
	if d, _ := expiring.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: `{"order":"A-2"}`}); d != approval.Pending {
		t.Errorf("a grant older than its TTL decided %v; want pending", d)
	}
	now = now.Add(2 * time.Minute)
	if p := expiring.Pending(); len(p) != 0 {
		t.Errorf("pending %v; want the request expired too", p)
	}
	expiring.Grant("refund", `{"order":"A-3"}`)
	if n := expiring.Revoke("refund", `{ "order" : "A-3" }`); n != 1 {
		t.Errorf("Revoke took back %d grants; want 1", n)
	}
	bounded := &approval.Grants{MaxPending: 3}
	for i := range 10 {
		_, _ = bounded.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: string(rune('a' + i))})
	}
	if p := bounded.Pending(); len(p) != 3 || p[0].Input != "h" || p[2].Input != "j" {
		t.Errorf("pending %v; want the 3 newest", p)
	}
}

// Regression: a schema with maximum 100 passed {"amount":5,"AMOUNT":50000},
// and the Go tool (encoding/json matches keys case-insensitively, the last
// wins) refunded 50000.
func TestKeysThatRepeatOrDifferOnlyInCaseAreArgsInvalid(t *testing.T) {
	schema := []byte(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"number","maximum":100}}}`)
	// ſ (long s) and K (the Kelvin sign) fold to s and k in encoding/json.
	for _, input := range []string{`{"amount":5,"AMOUNT":50000}`, `{"amount":5,"amount":50000}`, `{"amount":5,"meta":{"k":1,"K":2}}`,
		`{"amount":5,"meta":{"sum":1,"ſum":2}}`, `{"amount":5,"meta":{"k":1,"K":2}}`} {
		var ran atomic.Int32
		refund := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithArgsSchema(schema))
		r := refund.Run(context.Background(), input)
		if r.Kind() != middleware.KindArgsInvalid || r.Attempts != 0 || ran.Load() != 0 {
			t.Errorf("%s: %v after %d attempts, ran %d; want args-invalid, not called", input, r.Kind(), r.Attempts, ran.Load())
		}
		gated := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithApproval(&testkit.Approver{Decision: approval.Approved}))
		if r := gated.Run(context.Background(), input); r.Kind() != middleware.KindArgsInvalid || ran.Load() != 0 {
			t.Errorf("%s through a gate: %v, ran %d; want args-invalid before anyone is asked", input, r.Kind(), ran.Load())
		}
	}
	var te *middleware.ArgsError
	if _, err := canonical.JSON(`{"amount":5,"AMOUNT":50000}`); !errors.As(err, &te) {
		t.Errorf("Canonical = %v; want an *ArgsError", err)
	}
}

// Regression: canonical JSON read every number as a double, so a grant for
// order 9007199254740992 approved order 9007199254740993 (which Go decodes
// exactly into an int64), and a number out of a double's range made key
// order matter again, so a resumed run repeated a completed refund.
func TestInputsMatchOnlyWhenTheirValuesAreEqual(t *testing.T) {
	t.Run("a grant covers its own big integer only", func(t *testing.T) {
		var ran atomic.Int32
		grants := approval.NewGrants()
		refund := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
		grants.Grant("refund", `{"order_id":9007199254740992}`)
		r := refund.Run(context.Background(), `{"order_id":9007199254740993}`)
		if r.Kind() != middleware.KindApprovalRequired || ran.Load() != 0 {
			t.Fatalf("%v, ran %d; want the other order to pause for its own approval", r.Kind(), ran.Load())
		}
		if r := refund.Run(context.Background(), `{ "order_id" : 9007199254740992 }`); r.Status() != "ok" || ran.Load() != 1 {
			t.Fatalf("%v, ran %d; want the granted order refunded once", r.Kind(), ran.Load())
		}
	})
	t.Run("a resumed run replays a call whose keys moved, whatever its numbers", func(t *testing.T) {
		var ran atomic.Int32
		refund := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		ledger := run.NewMemoryLedger()
		refund.Run(run.With(context.Background(), "r", ledger), `{"amount":5,"ref":1e400}`)
		r := refund.Run(run.With(context.Background(), "r", ledger), `{"ref":10E399,"amount":5.0}`)
		if !r.Replayed || ran.Load() != 1 {
			t.Fatalf("replayed %v, ran %d; want the same call answered from the ledger", r.Replayed, ran.Load())
		}
		r = refund.Run(run.With(context.Background(), "r", ledger), `{"amount":5,"ref":9007199254740993}`)
		r2 := refund.Run(run.With(context.Background(), "r2", ledger), `{"amount":5,"ref":9007199254740992}`)
		if r.Replayed || r2.Replayed || ran.Load() != 3 {
			t.Fatalf("replayed %v %v, ran %d; want two new calls", r.Replayed, r2.Replayed, ran.Load())
		}
	})
}
