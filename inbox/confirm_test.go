package inbox_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Issue 28: a destructive call whose earlier attempt may already have
// been applied got no extra step. Approving it needs a second, explicit
// confirmation, enforced by the server: an approval without it records
// nothing and says why; a denial needs none; the request page says what
// Approve and Deny do and where the outcome shows.
func TestApprovingADestructiveCallThatMayHaveBeenAppliedNeedsASecondConfirmation(t *testing.T) {
	c := refundCall(refundInput, 2)
	c.MayHaveApplied = true
	g := waiting(t, c)
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID

	page := get(h, "alice", "/request?id="+id).Body.String()
	for _, want := range []string{`name="confirm" value="resend"`, "<b>Approve</b> lets this call run, this attempt only, when its agent run resumes: whoever runs the agent resumes it, not this page.",
		"<b>Deny</b> refuses it", `href="audit?run=run-7"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the request page lacks %q", want)
		}
	}
	f := form(t, h, "alice", id, "approve", "")
	w := send(h, "alice", http.MethodPost, "/decide", f)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "may already have been applied") {
		t.Fatalf("an approval without the second confirmation: %d\n%s", w.Code, w.Body)
	}
	if len(g.Requests()) != 1 || len(g.Audit(0)) != 0 {
		t.Fatal("an approval without the second confirmation was recorded")
	}
	f.Set("confirm", "resend")
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("an approval with the second confirmation: %d\n%s", w.Code, w.Body)
	}
	if d, _ := g.Decide(t.Context(), c); d != approval.Approved {
		t.Fatalf("the call after the confirmed approval: %v", d)
	}

	// A call that cannot have been applied, or a denial, needs no second step.
	plain := waiting(t, refundCall(refundInput, 1))
	hp := newInbox(t, inbox.Memory(plain))
	if page := get(hp, "alice", "/request?id="+onlyRequest(t, plain).ID).Body.String(); strings.Contains(page, `name="confirm"`) {
		t.Error("a first attempt asks for the second confirmation")
	}
	g2 := waiting(t, c)
	h2 := newInbox(t, inbox.Memory(g2))
	if w := send(h2, "bob", http.MethodPost, "/decide", form(t, h2, "bob", onlyRequest(t, g2).ID, "deny", "")); w.Code != http.StatusSeeOther {
		t.Fatalf("a denial without the second confirmation: %d\n%s", w.Code, w.Body)
	}
}
