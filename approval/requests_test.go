package approval_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/approval"
)

const refund = `{"order":"A-1001","amount_eur":25}`

func refundCall(attempt int) approval.CallInfo {
	return approval.CallInfo{Tool: "refund", CallID: "call_1", Input: refund, Attempt: attempt, RunID: "run-1", Destructive: true}
}

// clock is a Now for Grants that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newGrants() (*approval.Grants, *clock) {
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	return &approval.Grants{Now: c.now}, c
}

func pendingOne(t *testing.T, g *approval.Grants) approval.Request {
	t.Helper()
	rs := g.Requests()
	if len(rs) != 1 {
		t.Fatalf("want one request, got %+v", rs)
	}
	return rs[0]
}

func TestAnAnswerDecidesItsRequestOnceAndIsRecorded(t *testing.T) {
	g, clk := newGrants()
	if d, _ := g.Decide(context.Background(), refundCall(1)); d != approval.Pending {
		t.Fatalf("no grant yet: %v", d)
	}
	req := pendingOne(t, g)
	if req.Call.CanonicalInput != `{"amount_eur":25,"order":"A-1001"}` || !req.Since.Equal(clk.now()) {
		t.Fatalf("request %+v", req)
	}
	clk.add(time.Minute)
	rec, err := g.Answer(req.ID, approval.Approved, "alice", "customer called")
	if err != nil {
		t.Fatal(err)
	}
	if rec.By != "alice" || rec.Comment != "customer called" || rec.Decision != approval.Approved ||
		rec.RequestID != req.ID || rec.Call.Input != refund || rec.Call.RunID != "run-1" || rec.At.Sub(rec.Since) != time.Minute {
		t.Fatalf("record %+v", rec)
	}
	if _, err := g.Answer(req.ID, approval.Denied, "bob", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("a second answer: %v, want ErrNotPending", err)
	}
	if d, _ := g.Decide(context.Background(), refundCall(1)); d != approval.Approved {
		t.Fatalf("the answer's grant: %v", d)
	}
	if d, _ := g.Decide(context.Background(), refundCall(1)); d != approval.Pending {
		t.Fatalf("one answer approved two calls: %v", d)
	}
	if audit := g.Audit(0); len(audit) != 1 || audit[0].By != "alice" {
		t.Fatalf("audit %+v", audit)
	}
}

func TestAnAnswerCoversOnlyTheDetailsShown(t *testing.T) {
	g, _ := newGrants()
	_, _ = g.Decide(context.Background(), refundCall(1))
	shown := pendingOne(t, g)
	next := refundCall(2)
	next.MayHaveApplied = true
	_, _ = g.Decide(context.Background(), next) // the call asks again: its next attempt
	now := pendingOne(t, g)
	if now.ID == shown.ID || !now.Since.Equal(shown.Since) {
		t.Fatalf("asked again with other details: ID %s (was %s), since %v (was %v)", now.ID, shown.ID, now.Since, shown.Since)
	}
	if _, err := g.Answer(shown.ID, approval.Approved, "alice", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("an answer to what was shown before: %v, want ErrNotPending", err)
	}
	if len(g.Audit(0)) != 0 {
		t.Fatal("a refused answer was recorded")
	}
	_, _ = g.Decide(context.Background(), next) // the same details again: the same ID
	if again := pendingOne(t, g); again.ID != now.ID {
		t.Fatalf("the same details got a new ID: %s, was %s", again.ID, now.ID)
	}
}

func TestAnswersAtOnceRecordOne(t *testing.T) {
	defer goleak.VerifyNone(t)
	g, _ := newGrants()
	_, _ = g.Decide(context.Background(), refundCall(1))
	id := pendingOne(t, g).ID
	const n = 8
	errs := make(chan error, n)
	var start sync.WaitGroup
	start.Add(1)
	for i := range n {
		go func() {
			start.Wait()
			d := approval.Approved
			if i%2 == 1 {
				d = approval.Denied
			}
			_, err := g.Answer(id, d, "approver", "")
			errs <- err
		}()
	}
	start.Done()
	ok := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			ok++
		case !errors.Is(err, approval.ErrNotPending):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 || len(g.Audit(0)) != 1 {
		t.Fatalf("%d answers recorded, audit %+v; want one", ok, g.Audit(0))
	}
}

func TestAnswersAreCheckedBeforeAnythingIsRecorded(t *testing.T) {
	g, _ := newGrants()
	_, _ = g.Decide(context.Background(), refundCall(1))
	id := pendingOne(t, g).ID
	if _, err := g.Answer(id, approval.Pending, "alice", ""); err == nil {
		t.Error("a pending answer was accepted")
	}
	if _, err := g.Answer(id, approval.Approved, " ", ""); err == nil {
		t.Error("an answer by nobody was accepted")
	}
	if len(g.Requests()) != 1 || len(g.Audit(0)) != 0 {
		t.Fatal("a refused answer changed something")
	}
}

func TestTheAuditTrailIsBoundedByTimeAndCount(t *testing.T) {
	g, clk := newGrants()
	g.MaxAudit = 3
	g.AuditTTL = 24 * time.Hour
	answer := func(input string) {
		t.Helper()
		c := refundCall(1)
		c.Input = input
		_, _ = g.Decide(context.Background(), c)
		for _, r := range g.Requests() {
			if r.Call.Input == input {
				if _, err := g.Answer(r.ID, approval.Denied, "alice", ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, in := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`} {
		answer(in)
		clk.add(time.Hour)
	}
	audit := g.Audit(0)
	if len(audit) != 3 || audit[0].Call.Input != `{"n":4}` || audit[2].Call.Input != `{"n":2}` {
		t.Fatalf("want the newest three, newest first: %+v", audit)
	}
	if two := g.Audit(2); len(two) != 2 || two[0].Call.Input != `{"n":4}` {
		t.Fatalf("limit 2: %+v", two)
	}
	clk.add(22 * time.Hour) // {"n":2} was answered 25h ago, {"n":4} 23h ago
	if audit := g.Audit(0); len(audit) != 1 || audit[0].Call.Input != `{"n":4}` {
		t.Fatalf("after the TTL: %+v", audit)
	}
}

// Regression (issue 32, item 8): runs A and B waited on the same tool and
// input; the list showed one row, the person approved what it showed as
// run B, run A's call used the grant, and the audit said run B.
func TestAnApprovalGivenForOneRunsRequestLetsNoOtherRunsCallThrough(t *testing.T) {
	g, _ := newGrants()
	inRun := func(runID, callID string) approval.CallInfo {
		c := refundCall(1)
		c.RunID, c.CallID = runID, callID
		return c
	}
	a, b := inRun("run-A", "call_a"), inRun("run-B", "call_b")
	for _, c := range []approval.CallInfo{a, b} {
		if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
			t.Fatalf("%s: %v", c.RunID, d)
		}
	}
	rs := g.Requests()
	if len(rs) != 2 || rs[0].Call.RunID != "run-A" || rs[1].Call.RunID != "run-B" {
		t.Fatalf("requests %+v; want two, run A's and run B's", rs)
	}
	if _, err := g.Answer(rs[1].ID, approval.Approved, "alice", "B only"); err != nil {
		t.Fatal(err)
	}
	if d, _ := g.Decide(context.Background(), a); d != approval.Pending {
		t.Fatalf("run A's call after run B's approval: %v; want pending", d)
	}
	if rs := g.Requests(); len(rs) != 1 || rs[0].Call.RunID != "run-A" {
		t.Fatalf("requests %+v; want run A's still waiting", rs)
	}
	// Run B resumed: the model gave its call a new ID; the run names it.
	if d, _ := g.Decide(context.Background(), inRun("run-B", "call_b2")); d != approval.Approved {
		t.Fatalf("run B's resumed call: %v; want approved", d)
	}
	if d, _ := g.Decide(context.Background(), inRun("run-B", "call_b3")); d != approval.Pending {
		t.Fatalf("run B's second call: %v; want pending: one answer, one call", d)
	}
	if audit := g.Audit(0); len(audit) != 1 || audit[0].Call.RunID != "run-B" || audit[0].Call.CallID != "call_b" {
		t.Fatalf("audit %+v; want run B's request", audit)
	}

	t.Run("outside a run, a known call ID names the request", func(t *testing.T) {
		g, _ := newGrants()
		one, two := inRun("", "call_1"), inRun("", "call_2")
		one.CallIDKnown, two.CallIDKnown = true, true
		_, _ = g.Decide(context.Background(), one)
		_, _ = g.Decide(context.Background(), two)
		rs := g.Requests()
		if len(rs) != 2 {
			t.Fatalf("requests %+v; want two", rs)
		}
		if _, err := g.Answer(rs[1].ID, approval.Denied, "alice", ""); err != nil {
			t.Fatal(err)
		}
		if d, _ := g.Decide(context.Background(), one); d != approval.Pending {
			t.Fatalf("call_1 after call_2's denial: %v; want pending", d)
		}
		if d, _ := g.Decide(context.Background(), two); d != approval.Denied {
			t.Fatalf("call_2: %v; want denied", d)
		}
		// Continued by run.Resume without an ID of its own, the call takes
		// the paused call's, made up: the answer given for that ID is its.
		_, _ = g.Answer(g.Requests()[0].ID, approval.Approved, "alice", "")
		resumed := one
		resumed.CallIDKnown = false
		if d, _ := g.Decide(context.Background(), resumed); d != approval.Approved {
			t.Fatalf("call_1 resumed: %v; want approved", d)
		}
	})

	t.Run("outside a run, calls whose IDs were made up are one request", func(t *testing.T) {
		g, _ := newGrants()
		_, _ = g.Decide(context.Background(), inRun("", "call_1"))
		_, _ = g.Decide(context.Background(), inRun("", "call_2"))
		rs := g.Requests()
		if len(rs) != 1 || rs[0].Call.CallID != "call_2" {
			t.Fatalf("requests %+v; want one, the latest call's", rs)
		}
		if _, err := g.Answer(rs[0].ID, approval.Approved, "alice", ""); err != nil {
			t.Fatal(err)
		}
		if d, _ := g.Decide(context.Background(), inRun("", "call_3")); d != approval.Approved {
			t.Fatalf("the call made again: %v; want approved", d)
		}
	})

	t.Run("a program's Grant covers one call of any run", func(t *testing.T) {
		g, _ := newGrants()
		_, _ = g.Decide(context.Background(), a)
		_, _ = g.Decide(context.Background(), b)
		g.Grant("refund", refund)
		if rs := g.Requests(); len(rs) != 1 || rs[0].Call.RunID != "run-B" {
			t.Fatalf("requests %+v; want the oldest (run A's) dropped", rs)
		}
		if d, _ := g.Decide(context.Background(), b); d != approval.Approved {
			t.Fatalf("run B with a program's grant: %v", d)
		}
		if d, _ := g.Decide(context.Background(), a); d != approval.Pending {
			t.Fatalf("run A after the one grant was used: %v", d)
		}
		if n := g.Revoke("refund", refund); n != 0 {
			t.Fatalf("Revoke = %d", n)
		}
	})
}
