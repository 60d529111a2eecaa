package approval_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

func decide(t *testing.T, g *approval.Grants, tool, input string) approval.Decision {
	t.Helper()
	d, err := g.Decide(context.Background(), approval.CallInfo{Tool: tool, Input: input})
	if err != nil {
		t.Fatalf("Decide(%s, %s): %v; Grants never fails", tool, input, err)
	}
	return d
}

func TestAGrantCoversOneCallOfOneToolAndInput(t *testing.T) {
	g := approval.NewGrants()
	g.Grant("refund", `{"order":"A-1","amount":5}`)
	if d := decide(t, g, "refund", `{"order":"A-2","amount":5}`); d != approval.Pending {
		t.Errorf("another input: %v; want pending", d)
	}
	if d := decide(t, g, "charge", `{"order":"A-1","amount":5}`); d != approval.Pending {
		t.Errorf("another tool: %v; want pending", d)
	}
	if d := decide(t, g, "refund", `{ "amount": 5, "order": "A-1" }`); d != approval.Approved {
		t.Errorf("the same JSON in another key order: %v; want approved", d)
	}
	if d := decide(t, g, "refund", `{"order":"A-1","amount":5}`); d != approval.Pending {
		t.Errorf("a second call on one grant: %v; want pending", d)
	}
}

func TestDecisionsAreUsedInTheOrderGiven(t *testing.T) {
	g := approval.NewGrants()
	g.Deny("refund", "A-1")
	g.Grant("refund", "A-1")
	if d := decide(t, g, "refund", "A-1"); d != approval.Denied {
		t.Errorf("first: %v; want denied", d)
	}
	if d := decide(t, g, "refund", "A-1"); d != approval.Approved {
		t.Errorf("second: %v; want approved", d)
	}
}

func TestRevokeTakesBackWhatWasNotUsed(t *testing.T) {
	g := approval.NewGrants()
	g.Grant("refund", "A-1")
	g.Grant("refund", "A-1")
	if n := g.Revoke("refund", "A-1"); n != 2 {
		t.Errorf("Revoke = %d; want 2", n)
	}
	if d := decide(t, g, "refund", "A-1"); d != approval.Pending {
		t.Errorf("after Revoke: %v; want pending", d)
	}
}

func TestGrantsAndPendingRequestsExpire(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := &approval.Grants{TTL: time.Minute, Now: func() time.Time { return now }}
	g.Grant("refund", "A-1")
	decide(t, g, "refund", "B-2") // pending
	now = now.Add(2 * time.Minute)
	if d := decide(t, g, "refund", "A-1"); d != approval.Pending {
		t.Errorf("a grant past its TTL: %v; want pending", d)
	}
	for _, p := range g.Pending() {
		if p.Input == "B-2" {
			t.Errorf("a pending request past its TTL is still listed: %v", g.Pending())
		}
	}
}

func TestPendingIsBoundedOldestDroppedFirst(t *testing.T) {
	g := &approval.Grants{MaxPending: 2}
	for _, in := range []string{"A", "B", "C"} {
		decide(t, g, "refund", in)
	}
	p := g.Pending()
	if len(p) != 2 || p[0].Input != "B" || p[1].Input != "C" {
		t.Errorf("pending %v; want B and C, the oldest dropped", p)
	}
}

func TestPendingListsARequestOnceAndAGrantClearsIt(t *testing.T) {
	g := approval.NewGrants()
	decide(t, g, "refund", `{"a":1}`)
	decide(t, g, "refund", `{ "a": 1 }`)
	if p := g.Pending(); len(p) != 1 {
		t.Fatalf("pending %v; want one request for the same JSON", p)
	}
	g.Grant("refund", `{"a":1}`)
	if p := g.Pending(); len(p) != 0 {
		t.Errorf("pending %v after the grant; want none", p)
	}
}

func TestDecideKeysByTheGatesCanonicalInput(t *testing.T) {
	g := approval.NewGrants()
	g.Grant("refund", `{"a":1}`)
	// The gate passes the canonical form it matched; an Approver in between
	// that changed Input clears it, and Grants makes it again.
	d, _ := g.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: `{ "a" : 1 }`, CanonicalInput: `{"a":1}`})
	if d != approval.Approved {
		t.Errorf("with the gate's canonical input: %v; want approved", d)
	}
}

func TestGrantsAreSafeForConcurrentUse(t *testing.T) {
	g := approval.NewGrants()
	const n = 50
	for range n {
		g.Grant("refund", "A-1")
	}
	var wg sync.WaitGroup
	approved := make(chan struct{}, 2*n)
	for range 2 * n {
		wg.Go(func() {
			d, _ := g.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: "A-1"})
			if d == approval.Approved {
				approved <- struct{}{}
			}
		})
	}
	wg.Wait()
	if len(approved) != n {
		t.Fatalf("%d approved; want %d: each grant is used once", len(approved), n)
	}
	if p := g.Pending(); len(p) != 1 {
		t.Fatalf("pending %v; want the one request, listed once", p)
	}
}
