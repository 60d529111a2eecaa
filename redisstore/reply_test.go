package redisstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/redisstore"
)

// The replies of redisstore's Grants are the approvals inbox's: votes,
// changes and messages.
var _ inbox.Replier = (*redisstore.Grants)(nil)

func TestAQuorumOfTwoOnRedisGrantsOnlyOnceTwoDistinctPeopleApproved(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	a.Quorum = map[string]int{"refund": 2}
	b.Quorum = a.Quorum
	decide(t, a, call("refund", refundInput))
	req := onlyRequest(t, b)
	if req.Quorum != 2 || len(req.Votes) != 0 {
		t.Fatalf("request %+v", req)
	}
	rec, err := b.Answer(background, req.ID, approval.Approved, "alice", "")
	if err != nil || rec.Approvals != 1 || rec.Quorum != 2 {
		t.Fatalf("first vote: %+v, %v", rec, err)
	}
	if d := decide(t, a, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("one of two approvals let the call run: %v", d)
	}
	half := onlyRequest(t, a)
	if half.ID != req.ID || len(half.Votes) != 1 || half.Votes[0].By != "alice" {
		t.Fatalf("the request half-way: %+v", half)
	}
	if _, err := a.Answer(background, req.ID, approval.Approved, "alice", "again"); !errors.Is(err, approval.ErrAlreadyVoted) {
		t.Fatalf("alice voted twice: %v", err)
	}
	rec, err = a.Answer(background, req.ID, approval.Approved, "bob", "")
	if err != nil || rec.Approvals != 2 {
		t.Fatalf("second vote: %+v, %v", rec, err)
	}
	if d := decide(t, b, call("refund", refundInput)); d != approval.Approved {
		t.Fatalf("two approvals: %v", d)
	}
	if d := decide(t, b, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("the grant covered a second call: %v", d)
	}
	audit, err := a.Audit(background, 0)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, r := range audit {
		by = append(by, r.By)
	}
	if !slices.Equal(by, []string{"bob", "alice"}) {
		t.Fatalf("the audit shows each vote: %v", by)
	}
}

func TestOneDenyOnRedisEndsARequestHalfWayToItsQuorum(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	g.Quorum = map[string]int{"refund": 2}
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	if _, err := g.Answer(background, req.ID, approval.Approved, "alice", ""); err != nil {
		t.Fatal(err)
	}
	const msg = "Refunds over 20 EUR need a ticket."
	rec, err := g.Reply(background, req.ID, approval.Reply{Decision: approval.Denied, By: "bob", Message: msg})
	if err != nil || rec.Message != msg {
		t.Fatalf("deny: %+v, %v", rec, err)
	}
	v, err := g.Verdict(background, call("refund", refundInput))
	if err != nil || v.Decision != approval.Denied || v.Message != msg {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	if _, err := g.Answer(background, req.ID, approval.Approved, "carol", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("a vote after the deny: %v", err)
	}
}

func TestAnApprovalWithChangesOnRedisGrantsTheChangedInputOnly(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	const changed = `{"amount_eur":20,"order":"A-1001"}`
	rec, err := g.Reply(background, req.ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{"order":"A-1001", "amount_eur":20}`})
	if err != nil || rec.Input != changed {
		t.Fatalf("reply: %+v, %v", rec, err)
	}
	if d, err := g.Decide(background, call("refund", refundInput)); d != approval.Pending || !errors.Is(err, approval.ErrEdited) {
		t.Fatalf("Decide approved the input the person changed: %v, %v", d, err)
	}
	if d, err := g.Decide(background, call("refund", changed)); d != approval.Pending || err != nil {
		t.Fatalf("a call with the changed input is not the request approved: %v, %v", d, err)
	}
	v, err := g.Verdict(background, call("refund", refundInput))
	if err != nil || v.Decision != approval.Approved || v.Input != changed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	if v, _ := g.Verdict(background, call("refund", refundInput)); v.Decision != approval.Pending {
		t.Fatalf("the changed grant was used twice: %+v", v)
	}
}

func TestAnApprovalOnRedisWithTheInputAsShownIsAPlainApproval(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	rec, err := g.Reply(background, req.ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{ "amount_eur": 25, "order": "A-1001" }`})
	if err != nil || rec.Input != "" {
		t.Fatalf("reply: %+v, %v", rec, err)
	}
	if d := decide(t, g, call("refund", refundInput)); d != approval.Approved {
		t.Fatalf("Decide: %v", d)
	}
}

func TestVotesOnRedisForDifferentChangesDoNotCountTogether(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	g.Quorum = map[string]int{"refund": 2}
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	if _, err := g.Reply(background, req.ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{"order":"A-1001","amount_eur":20}`}); err != nil {
		t.Fatal(err)
	}
	rec, err := g.Answer(background, req.ID, approval.Approved, "bob", "")
	if err != nil || rec.Approvals != 1 {
		t.Fatalf("bob approved the input as shown, alice a changed one: %+v, %v", rec, err)
	}
	if v := onlyRequest(t, g).Votes; len(v) != 2 || v[0].Input == v[1].Input {
		t.Fatalf("the request still waits with both votes: %+v", v)
	}
}

func TestRepliesOnRedisThatCannotBeRecordedSayWhy(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	for _, r := range []approval.Reply{
		{Decision: approval.Approved, By: "alice", Input: `{"order":`},
		{Decision: approval.Approved, By: "alice", Input: `[1]`},
		{Decision: approval.Denied, By: "alice", Input: `{}`},
		{Decision: approval.Approved, By: "alice", Message: "hi"},
		{Decision: approval.Denied, By: "alice", Message: string(make([]byte, approval.MaxMessage+1))},
	} {
		if _, err := g.Reply(background, req.ID, r); err == nil {
			t.Errorf("%+v was recorded", r)
		}
	}
	if a, _ := g.Audit(background, 0); len(a) != 0 {
		t.Fatalf("a refused reply recorded something: %+v", a)
	}
	onlyRequest(t, g)
}

// One person is one vote on Redis too, whatever the spelling of their
// name (approval.Voter).
func TestOnePersonsVoteCountsOnceOnRedisWhateverTheSpellingOfTheirName(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	g.Quorum = map[string]int{"refund": 2}
	decide(t, g, call("refund", refundInput))
	req := onlyRequest(t, g)
	if _, err := g.Answer(background, req.ID, approval.Approved, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, again := range []string{"Alice", " alice", "ＡＬＩＣＥ"} {
		if _, err := g.Answer(background, req.ID, approval.Approved, again, ""); !errors.Is(err, approval.ErrAlreadyVoted) {
			t.Errorf("alice approved again as %q: %v; want ErrAlreadyVoted", again, err)
		}
	}
	if d := decide(t, g, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("one person's approvals let the call run: %v", d)
	}
}

// A replica with no Quorum of its own, or the toolsafe-approvals command,
// cannot lower the quorum the agent's replica asked for: the quorum
// travels with the request, so one person's approval through such a
// replica is one vote of two, and the call still waits.
func TestAQuorumCannotBeLoweredByAReplicaThatDoesNotKnowIt(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	agent, other := rs[0].store.Grants(), rs[1].store.Grants()
	agent.Quorum = map[string]int{"refund": 2}
	decide(t, agent, call("refund", refundInput))
	req := onlyRequest(t, other)
	if req.Quorum != 2 {
		t.Fatalf("the request as another replica lists it: quorum %d; want 2", req.Quorum)
	}
	rec, err := other.Answer(background, req.ID, approval.Approved, "alice", "")
	if err != nil || rec.Approvals != 1 || rec.Quorum != 2 {
		t.Fatalf("alice's approval through a replica without a Quorum: %+v, %v; want 1 of 2 approvals", rec, err)
	}
	if d := decide(t, agent, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("one approval through another replica let the call run: %v", d)
	}
	if _, err := other.Answer(background, req.ID, approval.Approved, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, agent, call("refund", refundInput)); d != approval.Approved {
		t.Fatalf("after alice and bob: %v", d)
	}
}
