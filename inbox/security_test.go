package inbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func TestADecisionNeedsTheTokenOfItsForm(t *testing.T) {
	other := refundCall(`{"order":"A-2002","amount_eur":9000}`, 1)
	g := waiting(t, refundCall(refundInput, 1), other)
	h := newInbox(t, inbox.Memory(g))
	rs := g.Requests()
	mine, theirs := rs[0].ID, rs[1].ID
	valid := form(t, h, "alice", mine, "approve", "")
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range valid {
			f[kk] = vv
		}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	otherKey := newInbox(t, inbox.Memory(g)) // its own random key
	for name, c := range map[string]struct {
		h    http.Handler
		user string
		f    url.Values
		hdr  []string
	}{
		"without a token":                       {h, "alice", with("token", ""), nil},
		"with a token altered":                  {h, "alice", with("token", valid.Get("token")+"x"), nil},
		"with alice's token, sent by bob":       {h, "bob", valid, nil},
		"with the id edited to another request": {h, "alice", with("id", theirs), nil},
		"with a token of another inbox's key":   {otherKey, "alice", valid, nil},
		"from another origin":                   {h, "alice", valid, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		if w := send(c.h, c.user, http.MethodPost, "/decide", c.f, c.hdr...); w.Code != http.StatusForbidden {
			t.Errorf("a POST %s: %d, want 403\n%s", name, w.Code, w.Body)
		}
	}
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 2 {
		t.Fatalf("a refused POST decided something: %+v", g.Audit(0))
	}
	// Fields the form does not have change nothing: the request is the id's.
	f := with("tool", "charge")
	f.Set("input", `{"order":"A-2002","amount_eur":9000}`)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("the valid form: %d\n%s", w.Code, w.Body)
	}
	if a := g.Audit(0); len(a) != 1 || a[0].RequestID != mine || a[0].Call.Input != refundInput || a[0].Call.Tool != "refund" {
		t.Fatalf("audit %+v", a)
	}
	if d, _ := g.Decide(t.Context(), other); d != approval.Pending {
		t.Fatalf("the other request was decided: %v", d)
	}
}

func TestAFormShownBeforeTheCallAskedAgainDecidesNothing(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	shown := form(t, h, "alice", onlyRequest(t, g).ID, "approve", "")
	retry := refundCall(refundInput, 2)
	retry.MayHaveApplied = true
	if d, _ := g.Decide(t.Context(), retry); d != approval.Pending {
		t.Fatal(d)
	}
	w := send(h, "alice", http.MethodPost, "/decide", shown)
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "asked again with other details") {
		t.Fatalf("a stale form: %d\n%s", w.Code, w.Body)
	}
	if len(g.Audit(0)) != 0 || onlyRequest(t, g).Call.Attempt != 2 {
		t.Fatal("a stale form decided something")
	}
	page := get(h, "alice", "/request?id="+url.QueryEscape(onlyRequest(t, g).ID)).Body.String()
	if !strings.Contains(page, "the previous attempt may have been applied") || !strings.Contains(page, "An earlier attempt may already have been applied") {
		t.Errorf("the retry's page does not warn:\n%s", page)
	}
}

func TestBadFormsAreRefused(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	for name, f := range map[string]url.Values{
		"no decision":      form(t, h, "alice", id, "", ""),
		"another decision": form(t, h, "alice", id, "pending", ""),
		"a long comment":   form(t, h, "alice", id, "approve", strings.Repeat("é", inbox.MaxComment+1)),
		"a comment not UTF-8": func() url.Values {
			return form(t, h, "alice", id, "approve", "\xff\xfe")
		}(),
	} {
		if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, w.Code)
		}
	}
	if len(g.Audit(0)) != 0 {
		t.Fatal("a bad form decided something")
	}
}

func TestWhenTheStoreIsDownThePagesSaySoAndNothingIsRecorded(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	s := &flaky{Store: inbox.Memory(g)}
	h := newInbox(t, s)
	id := onlyRequest(t, g).ID
	f := form(t, h, "alice", id, "approve", "")
	s.down.Store(true)
	for _, target := range []string{"/", "/live", "/request?id=" + url.QueryEscape(id), "/audit", "/audit.json", "/requests.json"} {
		w := get(h, "alice", target)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "The approvals store is unavailable") {
			t.Errorf("GET %s with the store down: %d\n%s", target, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "connection refused") {
			t.Errorf("GET %s shows the store's error text", target)
		}
	}
	w := send(h, "alice", http.MethodPost, "/decide", f)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "recorded whole or not at all") {
		t.Errorf("POST with the store down: %d\n%s", w.Code, w.Body)
	}
	s.down.Store(false)
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 1 {
		t.Fatal("a decision was recorded while the store was down")
	}
	s.answerDown.Store(true) // the list answers, the answer fails
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusServiceUnavailable {
		t.Errorf("POST with the answer failing: %d", w.Code)
	}
	s.answerDown.Store(false)
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Errorf("POST once the store is back: %d\n%s", w.Code, w.Body)
	}
}

func TestTheRequestPage(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	if w := get(h, "alice", "/request?id=nonsense"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "no longer waits") {
		t.Errorf("an unknown request: %d\n%s", w.Code, w.Body)
	}
	if w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", id, "deny", "too much")); w.Code != http.StatusSeeOther {
		t.Fatal(w.Code)
	}
	w := get(h, "bob", "/request?id="+url.QueryEscape(id))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "alice denied this request at") || !strings.Contains(w.Body.String(), "too much") || strings.Contains(w.Body.String(), `name="token"`) {
		t.Errorf("an answered request: %d\n%s", w.Code, w.Body)
	}
}

func TestOnlyTheScriptAndStyleAreServed(t *testing.T) {
	h := newInbox(t, inbox.Memory(approval.NewGrants()))
	for target, want := range map[string]int{"/static/inbox.js": 200, "/static/inbox.css": 200, "/static/pages.html": 404, "/static/": 404, "/nothing": 404} {
		if w := get(h, "alice", target); w.Code != want {
			t.Errorf("GET %s: %d, want %d", target, w.Code, want)
		}
	}
	if w := get(h, `<b onmouseover="x">eve</b>`, "/"); !strings.Contains(w.Body.String(), "&lt;b onmouseover=&#34;x&#34;&gt;eve&lt;/b&gt;") {
		t.Errorf("a user name is not shown as text:\n%s", w.Body)
	}
}

// tooMany is a Store whose answers are refused as redisstore refuses one
// past its bound of decisions waiting.
type tooMany struct{ inbox.Store }

func (tooMany) Answer(context.Context, string, approval.Decision, string, string) (approval.Record, error) {
	return approval.Record{}, fmt.Errorf("redisstore: 100 decisions for refund with this input wait to be used already: %w", approval.ErrTooManyDecisions)
}

// Regression (issue 32, item 9): every store error read "store
// unavailable", redisstore's "too many decisions waiting" among them.
func TestAStoreErrorSaysWhatHappened(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, tooMany{inbox.Memory(g)})
	id := onlyRequest(t, g).ID
	w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", id, "approve", ""))
	body := w.Body.String()
	if w.Code != http.StatusConflict || !strings.Contains(body, "too many approvals and denials of this tool with this input already wait") ||
		!strings.Contains(body, "This request still waits.") || strings.Contains(body, "unavailable") || strings.Contains(body, "redisstore:") {
		t.Fatalf("POST refused for too many decisions: %d\n%s", w.Code, body)
	}
}
