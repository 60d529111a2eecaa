package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Issue 28: the 1,001st request silently pushed the oldest off the list.
// In Chromium, a list that is open when it overflows says so at its next
// poll, how many were dropped and since when (in the viewer's time too),
// and the audit trail names each request dropped. Writes overflow.png and
// audit-events.png with -screenshots.
func TestAFullListSaysWhatItDroppedAndTheAuditNamesItInChromium(t *testing.T) {
	g := approval.NewGrants()
	g.MaxPending = 3
	s := &server{grants: g}
	h, err := inbox.New(inbox.Memory(g), func(r *http.Request) (string, bool) { return "alice", r.Header.Get("X-User") == "alice" },
		inbox.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	ask := func(i int) {
		s.ask(t, approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d","amount_eur":25}`, 1000+i), Attempt: 1,
			RunID: fmt.Sprintf("run-%d", i), CallID: fmt.Sprintf("call_%d", i), Destructive: true})
	}
	for i := range 3 {
		ask(i)
	}
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("tr.request"))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#overflow").length`)); n != 0 {
		t.Fatal("a list that dropped nothing speaks of an overflow")
	}
	oldest := g.Requests()[0].ID
	ask(3)
	ask(4)
	newest := g.Requests()[2].ID
	// The open page learns it at a poll, without a reload: a poll that read
	// the list before the asks may read the overflow after them, so wait
	// for the rows, which the server reads first.
	run(t, ctx, chromedp.WaitVisible(`tr[data-id="`+newest+`"]`), chromedp.WaitNotPresent(`tr[data-id="`+oldest+`"]`))
	said := text(t, ctx, "#overflow")
	contains(t, "the overflow notice", said, "2 requests were dropped from this list because it was full (at most 3 wait; the oldest goes first)",
		"the audit trail names each one dropped", " UTC (", "your time)")
	if rows := value(t, ctx, chromedp.Evaluate[string](`Array.prototype.map.call(document.querySelectorAll("tr.request td.run"), function (td) { return td.textContent; }).join(",")`)); rows != "run-2,run-3,run-4" {
		t.Errorf("the list shows %q; want the newest three", rows)
	}
	save(t, "overflow.png", value(t, ctx, chromedp.FullScreenshot(100)))

	run(t, ctx, chromedp.Navigate(ts.URL+"/audit"), chromedp.WaitVisible("tr.record.dropped"))
	rows := value(t, ctx, chromedp.Evaluate[string](`Array.prototype.map.call(document.querySelectorAll("tr.record.dropped"), function (tr) {
		return tr.querySelector("td.run").textContent + ": " + tr.querySelector("td.decision").textContent; }).join("\n")`))
	for _, run := range []string{"run-0", "run-1"} {
		contains(t, "the audit trail's dropped rows", rows, run+": dropped from the list, undecided, because it was full (at most 3 wait): its call asks again when its run resumes")
	}
	if n := strings.Count(rows, "\n") + 1; n != 2 {
		t.Errorf("%d dropped rows; want 2:\n%s", n, rows)
	}
	save(t, "audit-events.png", value(t, ctx, chromedp.FullScreenshot(100)))
	// Shown apart from answers, not as one.
	if color := value(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("tr.record.dropped td.decision")).color`)); color == "rgb(20, 108, 46)" || color == "rgb(29, 35, 48)" {
		t.Errorf("a dropped row's decision is coloured %s, as an approval or plain text", color)
	}
}

// Issue 28: a person refused (403) was told "your attempt was recorded",
// and it was not. In Chromium the refused person reads that it is in the
// audit trail, and an approver of the tool finds it there.
func TestARefusalIsInTheAuditTrailOfTheToolsApproversInChromium(t *testing.T) {
	tm := newTeam(t, 1)
	tm.pause(t, "run-r")
	carol := tab(t, map[string]any{"X-User": "carol"})
	resp := value(t, carol, chromedp.NavigateResponse(tm.requestURL(t)))
	if resp.Status != http.StatusForbidden {
		t.Fatalf("carol opened the refund: %d", resp.Status)
	}
	contains(t, "carol's refusal", text(t, carol, "#problem"), "Your attempt was recorded in the audit trail.")
	run(t, carol, chromedp.Navigate(tm.url+"audit"), chromedp.WaitVisible("h1"))
	if n := value(t, carol, chromedp.Evaluate[int](`document.querySelectorAll("tr.record").length`)); n != 0 {
		t.Errorf("carol's audit trail shows %d rows of a tool she may not decide", n)
	}

	alice := tab(t, map[string]any{"X-User": "alice"})
	run(t, alice, chromedp.Navigate(tm.url+"audit"), chromedp.WaitVisible("tr.record.refused"))
	row := text(t, alice, "tr.record.refused")
	contains(t, "alice's audit row of the refusal", row, "carol", "refused", "tried to open this request, which is not theirs to decide (403): nothing was decided", "refund", "run-r")
	run(t, alice, chromedp.Navigate(tm.url+"audit?by=carol"), chromedp.WaitVisible("tr.record.refused"))
	contains(t, "alice's audit trail filtered to carol", text(t, alice, "p.count"), "1 of 1 entries match")
}
