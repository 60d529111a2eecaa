package inbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func TestAPersonSeesAndDecidesOnlyWhatTheirGroupsMay(t *testing.T) {
	refund := refundCall(refundInput, 1)
	lookup := approval.CallInfo{Tool: "lookup", CallID: "call_2", Input: `{"order":"A-1001"}`, Attempt: 1, RunID: "run-7"}
	g := waiting(t, refund, lookup)
	var log bytes.Buffer
	h := newInbox(t, inbox.Memory(g), inbox.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
		inbox.WithAuthorize(inbox.Approvers(inbox.Groups{"finance": {"alice"}, "support": {"bob"}},
			map[string][]string{"refund": {"finance"}, "lookup": {"support", "finance"}})))
	rs := g.Requests()
	refundID, lookupID := rs[0].ID, rs[1].ID

	if body := get(h, "bob", "/").Body.String(); strings.Contains(body, refundID) || !strings.Contains(body, lookupID) {
		t.Fatalf("bob's list shows the refund, or not the lookup:\n%s", body)
	}
	if body := get(h, "bob", "/requests.json").Body.String(); strings.Contains(body, refundID) {
		t.Fatalf("bob's JSON lists the refund: %s", body)
	}
	if w := get(h, "bob", "/request?id="+url.QueryEscape(refundID)); w.Code != http.StatusForbidden {
		t.Fatalf("bob opened the refund: %d", w.Code)
	}
	// bob's own valid form, its id set to the refund: refused as not his to decide.
	bobs := form(t, h, "bob", lookupID, "approve", "")
	bobs.Set("id", refundID)
	if w := send(h, "bob", http.MethodPost, "/decide", bobs); w.Code != http.StatusForbidden {
		t.Fatalf("bob's decision of the refund: %d", w.Code)
	}
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 2 {
		t.Fatal("a refused decision recorded something")
	}
	if !strings.Contains(log.String(), "refused") || !strings.Contains(log.String(), "user=bob tool=refund") {
		t.Fatalf("the refusal was not recorded in the log:\n%s", log.String())
	}
	if w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", refundID, "approve", "")); w.Code != http.StatusSeeOther {
		t.Fatalf("alice's approval: %d\n%s", w.Code, w.Body)
	}
	for _, target := range []string{"/audit", "/audit.json", "/"} {
		if body := get(h, "bob", target).Body.String(); strings.Contains(body, refundID) {
			t.Errorf("bob's %s shows the refund's decision", target)
		}
		if body := get(h, "alice", target).Body.String(); !strings.Contains(body, refundID) {
			t.Errorf("alice's %s does not show her decision", target)
		}
	}
}

func TestAQuorumHalfWayIsShownAndOnePersonVotesOnce(t *testing.T) {
	g := waiting(t)
	g.Quorum = map[string]int{"refund": 2}
	g.Decide(context.Background(), refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	f := form(t, h, "alice", id, "approve", "")
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "./?answered=voted" {
		t.Fatalf("alice's vote: %d %s", w.Code, w.Header().Get("Location"))
	}
	body := get(h, "bob", "/request?id="+url.QueryEscape(id)).Body.String()
	if !strings.Contains(body, "1 of 2 approvals") || !strings.Contains(body, "alice</bdi> approved at") {
		t.Fatalf("the request page half-way:\n%s", body)
	}
	if w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", id, "approve", "")); w.Code != http.StatusConflict {
		t.Fatalf("alice's second vote: %d", w.Code)
	}
	if d, _ := g.Decide(context.Background(), refundCall(refundInput, 1)); d != approval.Pending {
		t.Fatal("one vote of two let the call run")
	}
	if w := send(h, "bob", http.MethodPost, "/decide", form(t, h, "bob", id, "approve", "")); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "./?answered=approved" {
		t.Fatalf("bob's vote: %d %s", w.Code, w.Header().Get("Location"))
	}
	if d, _ := g.Decide(context.Background(), refundCall(refundInput, 1)); d != approval.Approved {
		t.Fatal("two votes did not grant")
	}
}

func TestApproveWithChangesChecksTheSchemaAndGrantsTheChangedInputOnly(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	check := func(tool, input string) error {
		if strings.Contains(input, `"amount_eur":-`) {
			return errors.New(`"amount_eur" must be at least 0.`)
		}
		return nil
	}
	h := newInbox(t, inbox.Memory(g), inbox.WithInputCheck(check))
	id := onlyRequest(t, g).ID
	if body := get(h, "alice", "/request?id="+url.QueryEscape(id)).Body.String(); !strings.Contains(body, `id="approve-changed"`) {
		t.Fatalf("no Approve with changes:\n%s", body)
	}
	f := form(t, h, "alice", id, "approve-changed", "")
	for _, bad := range []string{`{"order":"A-1001","amount_eur":-5}`, `{"order":`, `<script>`} {
		f.Set("changed", bad)
		w := send(h, "alice", http.MethodPost, "/decide", f)
		if w.Code != http.StatusBadRequest || strings.Contains(w.Body.String(), "<script>") {
			t.Fatalf("changes %s: %d\n%s", bad, w.Code, w.Body)
		}
	}
	if w := send(h, "alice", http.MethodPost, "/decide", f); !strings.Contains(w.Body.String(), "not valid JSON") {
		t.Fatalf("the error of an input that is not JSON:\n%s", w.Body)
	}
	f.Set("changed", `{"order":"A-1001","amount_eur":20}`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("valid changes: %d\n%s", w.Code, w.Body)
	}
	if d, err := g.Decide(context.Background(), refundCall(refundInput, 1)); d != approval.Pending || !errors.Is(err, approval.ErrEdited) {
		t.Fatalf("the input as the model gave it was granted: %v %v", d, err)
	}
	if v, _ := g.Verdict(context.Background(), refundCall(refundInput, 1)); v.Input != `{"amount_eur":20,"order":"A-1001"}` {
		t.Fatalf("verdict %+v", v)
	}
	if a := g.Audit(0); len(a) != 1 || a[0].Input != `{"amount_eur":20,"order":"A-1001"}` || a[0].By != "alice" {
		t.Fatalf("audit %+v", a)
	}
}

func TestWithoutAnInputCheckTheInboxTakesNoChanges(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	f := form(t, h, "alice", id, "approve-changed", "")
	f.Set("changed", `{"order":"A-1001","amount_eur":20}`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusBadRequest {
		t.Fatalf("changes without a check: %d", w.Code)
	}
	if len(g.Audit(0)) != 0 {
		t.Fatal("recorded")
	}
}

func TestADenialsMessageIsRecordedAndShownAsText(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	f := form(t, h, "alice", id, "deny", "")
	f.Set("message", `<img src=x onerror=alert(1)> needs a ticket`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("deny: %d\n%s", w.Code, w.Body)
	}
	if v, _ := g.Verdict(context.Background(), refundCall(refundInput, 1)); v.Decision != approval.Denied || v.Message != `<img src=x onerror=alert(1)> needs a ticket` {
		t.Fatalf("verdict %+v", v)
	}
	if body := get(h, "alice", "/audit.json").Body.String(); !strings.Contains(body, `"message":"\u003cimg`) {
		t.Fatalf("audit JSON %s", body)
	}
}

func TestApproveWithArgumentsEditedIsRefusedNotTakenAsTheCallShown(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g), inbox.WithInputCheck(func(string, string) error { return nil }))
	id := onlyRequest(t, g).ID
	f := form(t, h, "alice", id, "approve", "")
	f.Set("changed", `{"order":"A-1001","amount_eur":20}`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "choose Approve with changes") {
		t.Fatalf("approve with edited arguments: %d\n%s", w.Code, w.Body)
	}
	f.Set("changed", "{\n  \"order\": \"A-1001\",\n  \"amount_eur\": 25\n}")
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("approve with the arguments as shown: %d\n%s", w.Code, w.Body)
	}
}
