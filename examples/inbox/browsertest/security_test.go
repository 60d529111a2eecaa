package browsertest

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Inputs a model could be made to send: markup, and the end of a script.
const (
	evilImg    = `{"order":"<img src=x onerror=\"window.pwned=1\">","amount_eur":25}`
	evilScript = `{"order":"A-1002","note":"</script><script>window.pwned=2</script>"}`
	evilNote   = `<img src=x onerror="window.pwned=3"> looks fine`
)

// flaky is a Store that fails while down is set.
type flaky struct {
	inbox.Store
	down atomic.Bool
}

var errDown = errors.New("connection refused")

func (f *flaky) Requests(ctx context.Context) ([]approval.Request, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Requests(ctx)
}

func (f *flaky) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	if f.down.Load() {
		return approval.Record{}, errDown
	}
	return f.Store.Answer(ctx, id, d, by, comment)
}

func (f *flaky) Audit(ctx context.Context, limit int) ([]approval.Record, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Audit(ctx, limit)
}

type server struct {
	grants *approval.Grants
	store  *flaky
	url    string
}

// newServer serves an inbox whose users are named by an X-User header,
// polling every 200ms, with the calls pending.
func newServer(t *testing.T, calls ...approval.CallInfo) *server {
	t.Helper()
	g := approval.NewGrants()
	s := &server{grants: g, store: &flaky{Store: inbox.Memory(g)}}
	for _, c := range calls {
		s.ask(t, c)
	}
	h, err := inbox.New(s.store, func(r *http.Request) (string, bool) {
		u := r.Header.Get("X-User")
		return u, u == "alice"
	}, inbox.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	s.url = ts.URL + "/"
	return s
}

func (s *server) ask(t *testing.T, c approval.CallInfo) {
	t.Helper()
	if d, _ := s.grants.Decide(context.Background(), c); d != approval.Pending {
		t.Fatalf("%+v: %v", c, d)
	}
}

func refund(callID, input string) approval.CallInfo {
	return approval.CallInfo{Tool: "refund", CallID: callID, Input: input, Attempt: 1, RunID: "run-x", Destructive: true}
}

// noScriptRan checks that nothing from an input became an element or ran.
func noScriptRan(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	got := value(t, ctx, chromedp.Evaluate[string](`[document.title, typeof window.pwned, document.querySelectorAll("main img, main script").length].join("|")`))
	if got != "Approvals inbox|undefined|0" {
		t.Errorf("%s: title|window.pwned|img and script elements = %q, want the inbox's title, nothing set, none", where, got)
	}
}

func TestInputsStayTextInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", evilImg))
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url))
	contains(t, "the list's input", text(t, ctx, "tr.request pre.input"), `"order": "<img src=x onerror=\"window.pwned=1\">"`)
	noScriptRan(t, ctx, "the list")

	// A request that arrives later shows up without a reload, as text too.
	s.ask(t, refund("call_2", evilScript))
	run(t, ctx, chromedp.WaitVisible(`tr.request:nth-child(2)`))
	contains(t, "the new row's input", text(t, ctx, `tr.request:nth-child(2) pre.input`), `</script><script>window.pwned=2</script>`)
	noScriptRan(t, ctx, "the updated list")

	run(t, ctx, chromedp.Click(`tr.request:nth-child(2) a.review`, chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	contains(t, "the request's input", text(t, ctx, "#input"), `"note": "</script><script>window.pwned=2</script>"`)
	noScriptRan(t, ctx, "the request's page")
	run(t, ctx, chromedp.SendKeys("#comment", evilNote), chromedp.Click("#deny", chromedp.NodeVisible))
	contains(t, "the audit line's comment", text(t, ctx, "tr.record.denied td.comment"), evilNote)
	noScriptRan(t, ctx, "the list with the audit line")
}

func TestFormsWithoutTheirTokenOrFromElsewhereAreRefusedInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", `{"order":"A-1001","amount_eur":25}`))
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url))
	id := value(t, ctx, chromedp.Evaluate[string](`document.querySelector("tr.request").dataset.id`))

	// The page's own origin, without the token.
	status := value(t, ctx, chromedp.Evaluate[int](fmt.Sprintf(
		`fetch("decide", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "decision=approve&id=" + encodeURIComponent(%q)}).then(r => r.status)`, id),
		chromedp.EvalAwaitPromise))
	if status != http.StatusForbidden {
		t.Errorf("a POST without the token: %d, want 403", status)
	}

	// Another origin, even holding a valid token (say it leaked).
	run(t, ctx, chromedp.Click("a.review", chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	token := value(t, ctx, chromedp.Evaluate[string](`document.querySelector("input[name=token]").value`))
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = template.Must(template.New("").Parse(`<!doctype html><form method="post" action="{{.Action}}">
<input name="id" value="{{.ID}}"><input name="token" value="{{.Token}}"><input name="decision" value="approve"></form>
<script>document.forms[0].submit()</script>`)).Execute(w, map[string]string{"Action": s.url + "decide", "ID": id, "Token": token})
	}))
	defer attacker.Close()
	run(t, ctx, chromedp.Navigate(attacker.URL))
	contains(t, "the inbox's answer to another origin", text(t, ctx, "#problem"), "must come from the inbox's own page")

	if len(s.grants.Audit(0)) != 0 || len(s.grants.Requests()) != 1 {
		t.Fatalf("a refused form decided something: %+v", s.grants.Audit(0))
	}
}

func TestAnUnknownUserIsRefusedInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", `{"order":"A-1001","amount_eur":25}`))
	for _, headers := range []map[string]any{nil, {"X-User": "mallory"}} {
		ctx := tab(t, headers)
		run(t, ctx, chromedp.Navigate(s.url))
		body := value(t, ctx, chromedp.Text("body", chromedp.NodeVisible))
		if !strings.Contains(body, "not signed in as an approver") || strings.Contains(body, "A-1001") {
			t.Errorf("as %v: %q", headers, body)
		}
	}
}

func TestTheStoreGoingDownIsShownInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", `{"order":"A-1001","amount_eur":25}`))
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url+"?"), chromedp.Click("a.review", chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	s.store.down.Store(true)
	run(t, ctx, chromedp.Click("#approve", chromedp.NodeVisible))
	contains(t, "the answer with the store down", text(t, ctx, "#problem"), "did not confirm your answer", "recorded whole or not at all")
	run(t, ctx, chromedp.Navigate(s.url))
	contains(t, "the list with the store down", text(t, ctx, "#problem"), "The approvals store is unavailable")
	s.store.down.Store(false)
	run(t, ctx, chromedp.WaitVisible("tr.request"), chromedp.WaitNotPresent("#problem")) // the page polls
	if len(s.grants.Audit(0)) != 0 || len(s.grants.Requests()) != 1 {
		t.Fatal("an answer was recorded while the store was down")
	}
}
