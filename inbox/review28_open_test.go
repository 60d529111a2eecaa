//go:build review28

// This file reproduces a defect the review of issue 28 found and left
// open (see its report): go test -tags review28 -run TestARefusedPersonCannotFlush ./inbox

package inbox_test

import (
	"net/url"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// A refused person's repeated GETs of one request each add a refusal,
// and the trail keeps MaxAudit of them: reloading a page they may not
// open pushes every earlier refusal (someone else's, their own first
// try) out of the audit trail.
func TestARefusedPersonCannotFlushTheRefusalsOfOthers(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	g.MaxAudit = 5
	h := newInbox(t, inbox.Memory(g), inbox.WithAuthorize(func(user string, _ approval.Request) bool { return user == "alice" }))
	id := url.QueryEscape(onlyRequest(t, g).ID)
	get(h, "bob", "/request?id="+id) // bob's refusal, the one to keep
	for range 5 {
		get(h, "eve", "/request?id="+id) // eve is not known: 403 before anything
		get(h, `<b onmouseover="x">eve</b>`, "/request?id="+id)
	}
	for _, e := range g.Events(0) {
		if e.By == "bob" {
			return
		}
	}
	t.Fatalf("bob's refusal was pushed out of the trail by another person's reloads: %d events", len(g.Events(0)))
}
