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

// A call whose earlier attempt may have been applied was sent with the
// arguments shown, and its next attempt goes under the same idempotency
// key: changing them now could leave the first applied while the model is
// told the person's ran. The page offers no changes, and the server takes
// none.
func TestACallThatMayHaveBeenAppliedTakesNoChanges(t *testing.T) {
	c := refundCall(refundInput, 2)
	c.MayHaveApplied = true
	g := waiting(t, c)
	h := newInbox(t, inbox.Memory(g), inbox.WithInputCheck(func(string, string) error { return nil }))
	id := onlyRequest(t, g).ID
	if page := get(h, "alice", "/request?id="+id).Body.String(); strings.Contains(page, `id="approve-changed"`) {
		t.Error("the page offers changes")
	}
	f := form(t, h, "alice", id, "approve-changed", "")
	f.Set("changed", `{"order":"A-1001","amount_eur":20}`)
	f.Set("confirm", "resend")
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "same idempotency key") {
		t.Fatalf("changes to a call that may have been applied: %d\n%s", w.Code, w.Body)
	}
	if len(g.Audit(0)) != 0 {
		t.Fatal("recorded")
	}
}
