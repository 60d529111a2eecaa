package inbox_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func TestThereIsNoInboxWithoutAnIdentityFunction(t *testing.T) {
	g := approval.NewGrants()
	for name, make := range map[string]func() (*inbox.Handler, error){
		"no identity": func() (*inbox.Handler, error) { return inbox.New(inbox.Memory(g), nil) },
		"no store":    func() (*inbox.Handler, error) { return inbox.New(inbox.Memory(nil), byHeader) },
		"a short key": func() (*inbox.Handler, error) {
			return inbox.New(inbox.Memory(g), byHeader, inbox.WithCSRFKey([]byte("short")))
		},
		"a fast polling": func() (*inbox.Handler, error) { return inbox.New(inbox.Memory(g), byHeader, inbox.WithPollInterval(1)) },
	} {
		if h, err := make(); err == nil || h != nil {
			t.Errorf("%s: New gave %v, %v; want an error", name, h, err)
		}
	}
}

func TestAnUnknownUserIsRefusedEverywhere(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	valid := form(t, h, "alice", id, "approve", "")
	for _, target := range []string{"/", "/live", "/request?id=" + url.QueryEscape(id), "/audit", "/audit.json", "/requests.json", "/static/inbox.js"} {
		for _, user := range []string{"", "mallory"} {
			if w := get(h, user, target); w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "A-1001") {
				t.Errorf("GET %s as %q: %d\n%s", target, user, w.Code, w.Body)
			}
		}
	}
	if w := send(h, "mallory", http.MethodPost, "/decide", valid); w.Code != http.StatusForbidden {
		t.Errorf("POST as an unknown user with alice's form: %d", w.Code)
	}
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 1 {
		t.Fatal("an unknown user decided something")
	}
}

func TestTheListShowsWhatWaitsAsText(t *testing.T) {
	evil := `{"order":"<img src=x onerror=alert(1)>","note":"</script><script>alert(2)</script>"}`
	g := waiting(t, refundCall(evil, 1))
	h := newInbox(t, inbox.Memory(g))
	for _, target := range []string{"/", "/live", "/request?id=" + url.QueryEscape(onlyRequest(t, g).ID)} {
		w := get(h, "alice", target)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", target, w.Code)
		}
		for _, want := range []string{"refund", "&lt;img src=x onerror=alert(1)&gt;", "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "run-7", "call_1", "no approval has been granted for this input"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q:\n%s", target, want, body)
			}
		}
		if strings.Contains(body, "<img") || strings.Contains(body, "<script>") || strings.Contains(body, "onerror=alert(1)>") {
			t.Errorf("GET %s renders the input as HTML:\n%s", target, body)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q", target, csp)
		}
	}
	if body := get(h, "alice", "/").Body.String(); !strings.Contains(body, "{\n  &#34;order&#34;: ") {
		t.Errorf("the input is not pretty-printed:\n%s", body)
	}
}

func TestApprovingGrantsTheCallAndRecordsWhoDidIt(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", id, "approve", "customer called <3"))
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "./?answered=approved" {
		t.Fatalf("POST /decide: %d %q\n%s", w.Code, w.Header().Get("Location"), w.Body)
	}
	if d, _ := g.Decide(t.Context(), refundCall(refundInput, 1)); d != approval.Approved {
		t.Fatalf("the call after the approval: %v", d)
	}
	list := get(h, "alice", "/?answered=approved").Body.String()
	for _, want := range []string{"Approved. The call runs when its agent run resumes.", "Nothing waits.", "customer called &lt;3", `class="by">alice<`} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	var audit struct {
		Records []map[string]any `json:"records"`
	}
	if err := json.Unmarshal(get(h, "bob", "/audit.json").Body.Bytes(), &audit); err != nil {
		t.Fatal(err)
	}
	if len(audit.Records) != 1 {
		t.Fatalf("audit %+v", audit)
	}
	r := audit.Records[0]
	for k, want := range map[string]any{"by": "alice", "decision": "approved", "comment": "customer called <3", "tool": "refund",
		"canonical_input": `{"amount_eur":25,"order":"A-1001"}`, "run_id": "run-7", "call_id": "call_1", "request_id": id} {
		if r[k] != want {
			t.Errorf("audit %s = %v, want %v", k, r[k], want)
		}
	}
	if at, _ := r["at"].(string); at == "" {
		t.Error("the record has no time")
	}
}

func TestDenyingRefusesTheCall(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	w := send(h, "bob", http.MethodPost, "/decide", form(t, h, "bob", onlyRequest(t, g).ID, "deny", ""))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("POST /decide: %d\n%s", w.Code, w.Body)
	}
	if d, _ := g.Decide(t.Context(), refundCall(refundInput, 1)); d != approval.Denied {
		t.Fatalf("the call after the denial: %v", d)
	}
}

func TestTwoAnswersToOneRequestMakeOneDecision(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	forms := map[string]url.Values{"alice": form(t, h, "alice", id, "approve", ""), "bob": form(t, h, "bob", id, "deny", "")}
	const clicks = 4 // each clicks twice
	codes := make(chan int, clicks)
	var wg sync.WaitGroup
	for range clicks / 2 {
		for user, f := range forms {
			wg.Go(func() { codes <- send(h, user, http.MethodPost, "/decide", f).Code })
		}
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[http.StatusSeeOther] != 1 || n[http.StatusConflict] != clicks-1 {
		t.Fatalf("statuses %v: want one 303 and the rest 409", n)
	}
	audit := g.Audit(0)
	if len(audit) != 1 {
		t.Fatalf("audit %+v", audit)
	}
	again := send(h, "alice", http.MethodPost, "/decide", forms["alice"])
	if again.Code != http.StatusConflict || !strings.Contains(again.Body.String(), audit[0].By+" "+audit[0].Decision.String()+" this request") {
		t.Errorf("a late click: %d\n%s", again.Code, again.Body)
	}
}
