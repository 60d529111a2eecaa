package inbox_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/inbox"
)

var changedRE = regexp.MustCompile(`(?s)<textarea id="changed" name="changed"[^>]*>(.*?)</textarea>`)

// submitted is the form a browser posts from user's page of request id
// when they click decision without touching any field: the hidden fields
// and the textarea of changes as the page filled it.
func submitted(t *testing.T, h http.Handler, user, id, decision string) url.Values {
	t.Helper()
	f := form(t, h, user, id, decision, "")
	body := get(h, user, "/request?id="+url.QueryEscape(id)).Body.String()
	if m := changedRE.FindStringSubmatch(body); m != nil {
		f.Set("changed", html.UnescapeString(m[1]))
	}
	return f
}

// With a quorum, once someone approved with changes, the page fills the
// changes' textarea with theirs: the next person's plain Approve, who
// changed nothing, must still approve the call as shown (it is what the
// page says at the top), not be refused as "you changed the arguments".
func TestPlainApproveAfterAnotherPersonsVoteWithChangesApprovesTheCallAsShown(t *testing.T) {
	g := waiting(t)
	g.Quorum = map[string]int{"refund": 2}
	g.Decide(context.Background(), refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g), inbox.WithInputCheck(func(string, string) error { return nil }))
	id := onlyRequest(t, g).ID
	f := submitted(t, h, "alice", id, "approve-changed")
	f.Set("changed", `{"order":"A-1001","amount_eur":20}`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("alice's vote with changes: %d\n%s", w.Code, w.Body)
	}
	id = onlyRequest(t, g).ID
	w := send(h, "bob", http.MethodPost, "/decide", submitted(t, h, "bob", id, "approve"))
	if w.Code != http.StatusSeeOther || strings.Contains(w.Body.String(), "You changed the arguments") {
		t.Fatalf("bob's plain Approve, nothing touched: %d\n%s", w.Code, w.Body)
	}
	if rs := g.Requests(); len(rs) != 1 || len(rs[0].Votes) != 2 {
		t.Fatalf("want two votes, for two inputs: %+v", rs)
	}
}
