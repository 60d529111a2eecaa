package approval_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
)

func TestAQuorumOfTwoGrantsOnlyOnceTwoDistinctPeopleApproved(t *testing.T) {
	g, _ := newGrants()
	g.Quorum = map[string]int{"refund": 2}
	ctx := context.Background()
	g.Decide(ctx, refundCall(1))
	req := pendingOne(t, g)
	if req.Quorum != 2 || len(req.Votes) != 0 {
		t.Fatalf("request %+v", req)
	}
	rec, err := g.Answer(req.ID, approval.Approved, "alice", "")
	if err != nil || rec.Approvals != 1 || rec.Quorum != 2 {
		t.Fatalf("first vote: %+v, %v", rec, err)
	}
	if d, _ := g.Decide(ctx, refundCall(1)); d != approval.Pending {
		t.Fatalf("one of two approvals let the call run: %v", d)
	}
	half := pendingOne(t, g)
	if half.ID != req.ID || len(half.Votes) != 1 || half.Votes[0].By != "alice" {
		t.Fatalf("the request half-way: %+v", half)
	}
	if _, err := g.Answer(req.ID, approval.Approved, "alice", "again"); !errors.Is(err, approval.ErrAlreadyVoted) {
		t.Fatalf("alice voted twice: %v", err)
	}
	rec, err = g.Answer(req.ID, approval.Approved, "bob", "")
	if err != nil || rec.Approvals != 2 {
		t.Fatalf("second vote: %+v, %v", rec, err)
	}
	if d, _ := g.Decide(ctx, refundCall(1)); d != approval.Approved {
		t.Fatalf("two approvals: %v", d)
	}
	if d, _ := g.Decide(ctx, refundCall(1)); d != approval.Pending {
		t.Fatalf("the grant covered a second call: %v", d)
	}
	audit := g.Audit(0)
	var by []string
	for _, r := range audit {
		by = append(by, r.By)
	}
	if !slices.Equal(by, []string{"bob", "alice"}) {
		t.Fatalf("the audit shows each vote: %v", by)
	}
}

func TestOneDenyEndsARequestHalfWayToItsQuorum(t *testing.T) {
	g, _ := newGrants()
	g.Quorum = map[string]int{"refund": 2}
	ctx := context.Background()
	g.Decide(ctx, refundCall(1))
	req := pendingOne(t, g)
	if _, err := g.Answer(req.ID, approval.Approved, "alice", ""); err != nil {
		t.Fatal(err)
	}
	rec, err := g.Reply(req.ID, approval.Reply{Decision: approval.Denied, By: "bob", Message: "Refunds over 20 EUR need a ticket."})
	if err != nil || rec.Message != "Refunds over 20 EUR need a ticket." {
		t.Fatalf("deny: %+v, %v", rec, err)
	}
	v, _ := g.Verdict(ctx, refundCall(1))
	if v.Decision != approval.Denied || v.Message != "Refunds over 20 EUR need a ticket." {
		t.Fatalf("verdict %+v", v)
	}
	if _, err := g.Answer(req.ID, approval.Approved, "carol", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("a vote after the deny: %v", err)
	}
}

func TestAnApprovalWithChangesGrantsTheChangedInputOnly(t *testing.T) {
	g, _ := newGrants()
	ctx := context.Background()
	g.Decide(ctx, refundCall(1))
	req := pendingOne(t, g)
	rec, err := g.Reply(req.ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{"order":"A-1001", "amount_eur":20}`})
	if err != nil || rec.Input != `{"amount_eur":20,"order":"A-1001"}` {
		t.Fatalf("reply: %+v, %v", rec, err)
	}
	if d, err := g.Decide(ctx, refundCall(1)); d != approval.Pending || !errors.Is(err, approval.ErrEdited) {
		t.Fatalf("Decide approved the input the person changed: %v, %v", d, err)
	}
	v, _ := g.Verdict(ctx, refundCall(1))
	if v.Decision != approval.Approved || v.Input != `{"amount_eur":20,"order":"A-1001"}` {
		t.Fatalf("verdict %+v", v)
	}
	if got := approval.ChangedFields(refund, v.Input); !slices.Equal(got, []string{"amount_eur"}) {
		t.Fatalf("changed fields %v", got)
	}
	if v, _ := g.Verdict(ctx, refundCall(1)); v.Decision != approval.Pending {
		t.Fatalf("the changed grant was used twice: %+v", v)
	}
}

func TestVotesForDifferentChangesDoNotCountTogether(t *testing.T) {
	g, _ := newGrants()
	g.Quorum = map[string]int{"refund": 2}
	g.Decide(context.Background(), refundCall(1))
	req := pendingOne(t, g)
	if _, err := g.Reply(req.ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{"order":"A-1001","amount_eur":20}`}); err != nil {
		t.Fatal(err)
	}
	rec, err := g.Answer(req.ID, approval.Approved, "bob", "")
	if err != nil || rec.Approvals != 1 {
		t.Fatalf("bob approved the input as shown, alice a changed one: %+v, %v", rec, err)
	}
	if len(pendingOne(t, g).Votes) != 2 {
		t.Fatal("the request still waits with both votes")
	}
}

func TestARepliesThatCannotBeRecordedSayWhy(t *testing.T) {
	g, _ := newGrants()
	g.Decide(context.Background(), refundCall(1))
	req := pendingOne(t, g)
	for _, r := range []approval.Reply{
		{Decision: approval.Approved, By: "alice", Input: `{"order":`},
		{Decision: approval.Approved, By: "alice", Input: `[1]`},
		{Decision: approval.Denied, By: "alice", Input: `{}`},
		{Decision: approval.Approved, By: "alice", Message: "hi"},
		{Decision: approval.Denied, By: "alice", Message: string(make([]byte, approval.MaxMessage+1))},
	} {
		if _, err := g.Reply(req.ID, r); err == nil {
			t.Errorf("%+v was recorded", r)
		}
	}
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 1 {
		t.Fatal("a refused reply recorded something")
	}
}

// One person is one vote whatever the spelling of their name: "Alice",
// " alice" and the full-width "ａｌｉｃｅ" after "alice" are refused with
// ErrAlreadyVoted, and the request still waits for a second person.
func TestOnePersonsVoteCountsOnceWhateverTheSpellingOfTheirName(t *testing.T) {
	g, _ := newGrants()
	g.Quorum = map[string]int{"refund": 2}
	ctx := context.Background()
	g.Decide(ctx, refundCall(1))
	req := pendingOne(t, g)
	if _, err := g.Answer(req.ID, approval.Approved, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, again := range []string{"Alice", " alice", "alice\t", "ＡＬＩＣＥ"} {
		if _, err := g.Answer(req.ID, approval.Approved, again, ""); !errors.Is(err, approval.ErrAlreadyVoted) {
			t.Errorf("alice approved again as %q: %v; want ErrAlreadyVoted", again, err)
		}
	}
	if d, _ := g.Decide(ctx, refundCall(1)); d != approval.Pending {
		t.Fatalf("one person's approvals let the call run: %v", d)
	}
	if _, err := g.Answer(req.ID, approval.Approved, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if d, _ := g.Decide(ctx, refundCall(1)); d != approval.Approved {
		t.Fatalf("alice's and bob's approvals: %v", d)
	}
}
