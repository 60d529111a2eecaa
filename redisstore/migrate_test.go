package redisstore_test

import (
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// Regression (issue 33: every fleet's approvals sat in one slot, "{grants}"
// whatever the prefix): the keys now carry the prefix in their tags and
// spread over 16 groups; a replica of the new version with ReadOldKeys
// loses no grant, answer or pending request that a replica of the older
// version kept, and lists no request twice.
func TestMovingToTheTaggedKeysLosesNoGrantNorPendingRequest(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	before := redisstore.OldKeys(rs[0].store) // a replica of the older version
	after := rs[1].store.Grants()
	after.ReadOldKeys = true

	waiting, granted, answered := call("refund", `{"order":"A-1"}`), call("refund", `{"order":"A-2"}`), call("refund", `{"order":"A-3"}`)
	for _, c := range []approval.CallInfo{waiting, answered} {
		if d := decide(t, before, c); d != approval.Pending {
			t.Fatalf("the older replica, %s: %v", c.Input, d)
		}
	}
	if err := before.Grant(background, granted.Tool, granted.Input); err != nil {
		t.Fatal(err)
	}
	for _, r := range requests(t, before) {
		if r.Call.Input == answered.Input {
			if _, err := before.Answer(background, r.ID, approval.Approved, "alice", ""); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The newer replica lists the request that waits, once, even after its
	// call asked again.
	reqs := requests(t, after)
	if len(reqs) != 1 || reqs[0].Call.Input != waiting.Input || !strings.HasPrefix(reqs[0].ID, "old-") {
		t.Fatalf("the newer replica lists %+v; want the older one's waiting request, its ID old-...", reqs)
	}
	if d := decide(t, after, waiting); d != approval.Pending {
		t.Fatalf("the waiting call on the newer replica: %v", d)
	}
	if n := len(requests(t, after)); n != 1 {
		t.Fatalf("%d requests after the call asked again on the newer replica; want it listed once", n)
	}
	// It uses the grant and the answer the older one kept, once each.
	for _, c := range []approval.CallInfo{granted, answered} {
		if d := decide(t, after, c); d != approval.Approved {
			t.Fatalf("%s on the newer replica: %v; want the older replica's decision", c.Input, d)
		}
	}
	if d := decide(t, after, granted); d != approval.Pending {
		t.Fatalf("a grant used twice: %v", d)
	}
	// It answers the old request where it waits, and the call uses it.
	if _, err := after.Answer(background, reqs[0].ID, approval.Approved, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, after, waiting); d != approval.Approved {
		t.Fatalf("the answered old request: %v", d)
	}
	audit, err := after.Audit(background, 0)
	if err != nil || len(audit) != 2 || audit[0].By != "bob" || audit[1].By != "alice" {
		t.Fatalf("audit %+v, %v; want bob's answer, then alice's", audit, err)
	}
	// What the newer replica wrote (the second call of the grant, now
	// pending) is under the tagged keys, none under the old ones.
	keys, err := redistest.Keys(background, rs[1].client, rs[1].prefix)
	if err != nil {
		t.Fatal(err)
	}
	tagged := 0
	for k := range keys {
		if strings.HasPrefix(k, "{"+rs[1].prefix+":grants:") {
			tagged++
		}
	}
	if tagged == 0 || len(requests(t, rs[1].store.Grants())) != 1 {
		t.Errorf("keys %v; want the newer replica's request under {PREFIX:grants:G}", keys)
	}

	// Without ReadOldKeys the old keys are not read: what is left there is
	// not used.
	if err := before.Grant(background, "refund", `{"order":"A-9"}`); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, rs[1].store.Grants(), call("refund", `{"order":"A-9"}`)); d != approval.Pending {
		t.Errorf("a grant in the old keys, ReadOldKeys off: %v; want pending", d)
	}
}

func requests(t *testing.T, g *redisstore.Grants) []approval.Request {
	t.Helper()
	rs, err := g.Requests(background)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
