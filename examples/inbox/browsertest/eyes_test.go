package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/middleware"
	toolsaferun "github.com/toolsafe/toolsafe/run"
)

// notContains fails t when got holds any of bad.
func notContains(t *testing.T, what, got string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(got, b) {
			t.Errorf("%s holds %+q: %+q", what, b, got)
		}
	}
}

// Regression (issue 32, item 7): "\u202e0052" showed as 2500, a call ID
// call_\u202efdp.exe as call_exe.pdf, and two payees that differ by a
// U+200B were pixel-identical: in the list, the request's page and the
// audit trail, what Chromium shows is the escape, and the page says why.
func TestInvisibleAndDirectionChangingCharactersReachThePersonEscapedInChromium(t *testing.T) {
	plain := refund("call_1", `{"order":"A-1001","payee":"Acme"}`)
	plain.RunID = "run-1"
	tricked := refund("call_\u202efdp.exe", "{\"order\":\"A-1001\",\"amount_eur\":\"\u202e0052\",\"payee\":\"Acme\u200b\",\"bank\":\"p\u0430ypal\",\"note\":\"\u05e9\u05dc\u05dd\"}")
	tricked.RunID = "run-2"
	s := newServer(t, plain, tricked)
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url))
	hidden := []string{"\u202e", "\u200b"}

	// The list: the two payees differ on the screen.
	first, second := text(t, ctx, "tr.request:nth-child(1) pre.input"), text(t, ctx, "tr.request:nth-child(2) pre.input")
	contains(t, "the plain row's input", first, `"payee": "Acme"`)
	contains(t, "the tricked row's input", second, `"amount_eur": "\u202e0052"`, `"payee": "Acme\u200b"`, `"bank": "pаypal"`)
	notContains(t, "the tricked row's input", second, append(hidden, "2500")...)
	call := text(t, ctx, "tr.request:nth-child(2) td.call")
	if call != `call_\u202efdp.exe` {
		t.Errorf("the call ID shows as %+q; want call_\\u202efdp.exe", call)
	}
	contains(t, "the tricked row's warnings", text(t, ctx, "tr.request:nth-child(2) ul.warnings"),
		`The input holds characters that are invisible, or change the order or the look of the text, shown as their codes: \u202e (RIGHT-TO-LEFT OVERRIDE), \u200b (ZERO WIDTH SPACE).`,
		`The input has a value that mixes Latin and Cyrillic letters, which look alike: “pаypal” (а is not Latin).`,
		`The call ID holds characters`)
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.request:nth-child(1) ul.warnings").length`)); n != 0 {
		t.Errorf("the plain row has %d warnings; want none", n)
	}
	// The Cyrillic letter is marked, and the right-to-left value isolated.
	if got := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.request:nth-child(2) pre.input mark.lookalike")].map(m => m.textContent).join("|")`)); got != "а" {
		t.Errorf("the marked letters are %q; want the Cyrillic а", got)
	}
	if got := value(t, ctx, chromedp.Evaluate[string](`(b => b ? b.dir + "|" + getComputedStyle(b).unicodeBidi + "|" + b.textContent : "none")(document.querySelector("tr.request:nth-child(2) pre.input bdi"))`)); got != `auto|isolate|"שלם"` {
		t.Errorf("the right-to-left value's isolation: %q; want auto|isolate|\"שלם\"", got)
	}

	// The request's page.
	run(t, ctx, chromedp.Click(`tr.request:nth-child(2) a.review`, chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	contains(t, "the request's warnings", text(t, ctx, "#warnings"), "Read closely before you decide", `\u202e (RIGHT-TO-LEFT OVERRIDE)`, "mixes Latin and Cyrillic")
	contains(t, "the request's input", text(t, ctx, "#input"), `"amount_eur": "\u202e0052"`, `"payee": "Acme\u200b"`)
	notContains(t, "the request's input", text(t, ctx, "#input"), append(hidden, "2500")...)
	if got := text(t, ctx, "dd.call"); got != `call_\u202efdp.exe` {
		t.Errorf("the request's call ID shows as %+q", got)
	}
	if got := text(t, ctx, "dd.run"); got != "run-2" {
		t.Errorf("the request's run shows as %+q", got)
	}

	// The audit trail, with the approver's comment, which may hide things too.
	run(t, ctx, chromedp.SetValue("#comment", "ok\u200b"), chromedp.Click("#deny", chromedp.NodeVisible), chromedp.WaitVisible("#notice"))
	run(t, ctx, chromedp.Navigate(s.url+"audit"))
	rec := text(t, ctx, "tr.record.denied")
	contains(t, "the audit record", rec, `call_\u202efdp.exe (attempt 1)`, `"amount_eur": "\u202e0052"`, `ok\u200b`, "run-2",
		`The comment holds characters`, `The call ID holds characters`)
	notContains(t, "the audit record", rec, append(hidden, "2500")...)
	noScriptRan(t, ctx, "the audit trail")
}

// Regression (issue 32, item 8): runs A and B paused on the same refund;
// the list showed one row, the person approved what it showed as run B,
// run A's resumed call used the approval, and the audit said run B. Here
// the refunds are real calls through toolsafe's gate, in runs.
func TestAnApprovalGivenForOneRunsRequestLetsNoOtherRunsCallThroughInChromium(t *testing.T) {
	grants := approval.NewGrants()
	var refunded atomic.Int32
	var refundedIn atomic.Value
	tool := toolsafe.Wrap(middleware.Func("refund", "refunds an order", func(ctx context.Context, input string) (string, error) {
		refunded.Add(1)
		return "refunded", nil
	}), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	ledger := toolsaferun.NewMemoryLedger()
	const input = `{"order":"A-1001","amount_eur":25}`
	paused := map[string]*approval.Required{}
	call := func(runID string, ar *approval.Required) (string, error) {
		ctx := toolsaferun.With(context.Background(), runID, ledger)
		if ar != nil {
			ctx = toolsaferun.Resume(ctx, ar)
		}
		out, err := tool.Call(ctx, input)
		if err == nil {
			refundedIn.Store(runID)
		}
		return out, err
	}
	for _, id := range []string{"run-A", "run-B"} {
		_, err := call(id, nil)
		var ar *approval.Required
		if !errors.As(err, &ar) {
			t.Fatalf("%s: %v; want a pause", id, err)
		}
		paused[id] = ar
	}

	h, err := inbox.New(inbox.Memory(grants), func(r *http.Request) (string, bool) { return "alice", true }, inbox.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := tab(t, nil)
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	runs := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.request td.run")].map(td => td.innerText).join("|")`))
	if runs != "run-A|run-B" {
		t.Fatalf("the rows' runs: %q; want two rows, run-A|run-B", runs)
	}
	run(t, ctx, chromedp.Click(`tr.request:nth-child(2) a.review`, chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	if got := text(t, ctx, "dd.run"); got != "run-B" {
		t.Fatalf("the request's page shows run %q; want run-B", got)
	}
	run(t, ctx, chromedp.SendKeys("#comment", "run B only"), chromedp.Click("#approve", chromedp.NodeVisible), chromedp.WaitVisible("#notice"))
	if got := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.request td.run")].map(td => td.innerText).join("|")`)); got != "run-A" {
		t.Errorf("after the answer the list shows %q; want run A's request still waiting", got)
	}

	// Run A resumes first: its call was not approved.
	if _, err := call("run-A", paused["run-A"]); !errors.As(err, new(*approval.Required)) || refunded.Load() != 0 {
		t.Fatalf("run A resumed: %v, %d refunds; want it paused again, none made", err, refunded.Load())
	}
	if out, err := call("run-B", paused["run-B"]); out != "refunded" || err != nil || refunded.Load() != 1 {
		t.Fatalf("run B resumed: %q, %v, %d refunds; want one refund", out, err, refunded.Load())
	}
	if got := refundedIn.Load(); got != "run-B" {
		t.Fatalf("the refund ran in %v; want run-B", got)
	}

	run(t, ctx, chromedp.Navigate(srv.URL+"/audit"))
	recs := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.record")].map(tr => tr.querySelector("td.run").innerText + " " + tr.querySelector("td.decision").innerText + " " + tr.querySelector("td.comment").innerText).join("|")`))
	if recs != "run-B approved run B only" {
		t.Fatalf("the audit trail shows %q; want one record, run B's, whose call ran", recs)
	}
	if got := value(t, ctx, chromedp.Evaluate[string](`(a => a ? a.innerText : "")(document.querySelector("tr.record td.call"))`)); !strings.Contains(got, paused["run-B"].CallID) {
		t.Errorf("the audit record's call: %q; want run B's paused call %s", got, paused["run-B"].CallID)
	}
}

// refusing is a Store whose answers are refused as redisstore refuses one
// past its bound of decisions waiting for a tool and input.
type refusing struct{ inbox.Store }

func (refusing) Answer(context.Context, string, approval.Decision, string, string) (approval.Record, error) {
	return approval.Record{}, fmt.Errorf("redisstore: 100 decisions for refund with this input wait to be used already: %w", approval.ErrTooManyDecisions)
}

// Regression (issue 32, item 9): every store error read "store
// unavailable", redisstore's "too many decisions waiting" among them.
func TestAStoreErrorSaysWhatHappenedInChromium(t *testing.T) {
	grants := approval.NewGrants()
	if d, _ := grants.Decide(context.Background(), refund("call_1", `{"order":"A-1001","amount_eur":25}`)); d != approval.Pending {
		t.Fatal(d)
	}
	h, err := inbox.New(refusing{inbox.Memory(grants)}, func(*http.Request) (string, bool) { return "alice", true })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := tab(t, nil)
	run(t, ctx, chromedp.Navigate(srv.URL+"/"), chromedp.Click("a.review", chromedp.NodeVisible), chromedp.WaitVisible("#approve"),
		chromedp.Click("#approve", chromedp.NodeVisible))
	problem := text(t, ctx, "#problem")
	contains(t, "the refused answer", problem, "not recorded: too many approvals and denials of this tool with this input already wait", "This request still waits.")
	notContains(t, "the refused answer", problem, "unavailable", "redisstore")
	run(t, ctx, chromedp.Navigate(srv.URL+"/"))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.request").length`)); n != 1 || len(grants.Audit(0)) != 0 {
		t.Fatalf("%d rows, audit %+v; want the request still waiting, nothing recorded", n, grants.Audit(0))
	}
}

// Attack on item 7's rule: two runs pay the same payee as a person reads
// it, one written José (é as one character, NFC), the other Jose and a
// combining acute (NFD); a third's tool is "рау", all Cyrillic. Chromium
// drew the two payees pixel for pixel alike and the tool as "pay". Now the
// mark shows as its code, and the page says how "рау" reads.
func TestLookalikePayeesAndToolNamesLookDifferentInChromium(t *testing.T) {
	nfc := refund("call_1", `{"order":"A-1001","payee":"Jos`+"\u00e9"+`"}`)
	nfc.RunID = "run-1"
	nfd := refund("call_2", `{"order":"A-1001","payee":"Jose`+"\u0301"+`"}`)
	nfd.RunID = "run-2"
	cyr := refund("call_3", `{"order":"A-1001"}`)
	cyr.Tool, cyr.RunID = "\u0440\u0430\u0443", "run-3"
	s := newServer(t, nfc, nfd, cyr)
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url))
	first, second := text(t, ctx, "tr.request:nth-child(1) pre.input"), text(t, ctx, "tr.request:nth-child(2) pre.input")
	contains(t, "the NFC row's input", first, `"payee": "José"`)
	contains(t, "the NFD row's input", second, `"payee": "Jose\u0301"`)
	notContains(t, "the NFD row's input", second, "\u0301")
	contains(t, "the NFD row's warnings", text(t, ctx, "tr.request:nth-child(2) ul.warnings"), `\u0301 (COMBINING ACUTE ACCENT)`)
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.request:nth-child(1) ul.warnings").length`)); n != 0 {
		t.Errorf("the NFC row has %d warnings; want none", n)
	}
	contains(t, "the Cyrillic tool's warnings", text(t, ctx, "tr.request:nth-child(3) ul.warnings"),
		`The tool name has a value of Cyrillic letters that all look like Latin ones: “рау” (it reads as “pay”).`)
	if got := value(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("tr.request:nth-child(3) mark.lookalike")].map(m => m.textContent).join("")`)); !strings.Contains(got, "рау") {
		t.Errorf("the marked letters are %q; want the tool's Cyrillic letters", got)
	}
}
