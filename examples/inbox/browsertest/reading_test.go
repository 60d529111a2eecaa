package browsertest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 28: the list was rebuilt on every poll (each row's age changed
// every second), so a focused link or a half-read row was lost and rows
// moved under the cursor. Now a poll patches the rows in place: a row
// whose request did not change is the same element after a new request
// arrives, its link keeps the focus, and its age is counted by the page
// from the time the server sent, with the viewer's local time beside UTC.
func TestARowStaysInPlaceWhileTheListChangesInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", `{"order":"A-1001","amount_eur":25}`))
	first := s.grants.Requests()[0].ID
	ctx := tab(t, map[string]any{"X-User": "alice"})
	row := `tr[data-id="` + first + `"]`
	run(t, ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(row))
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('`+row+`').kept = "yes"; document.querySelector('`+row+` a.review').focus()`))

	s.ask(t, refund("call_2", `{"order":"B-2002","amount_eur":7}`))
	var second string
	for _, q := range s.grants.Requests() {
		if q.ID != first {
			second = q.ID
		}
	}
	run(t, ctx, chromedp.WaitVisible(`tr[data-id="`+second+`"]`)) // the page polls every 200ms

	got := value(t, ctx, chromedp.Evaluate[string](`(function () {
		var r = document.querySelector('`+row+`');
		return [r.kept, document.activeElement === r.querySelector("a.review"), document.querySelectorAll("tr.request").length].join("|");
	})()`))
	if got != "yes|true|2" {
		t.Errorf("after a new request arrived, the first row (kept|focused|rows) is %q; want the same element, still focused, beside the new one (yes|true|2)", got)
	}
	age := text(t, ctx, row+" td.age time")
	if !regexp.MustCompile(`^\d+s$`).MatchString(age) {
		t.Errorf("the age shown is %q; want seconds, counted by the page (such as 3s)", age)
	}
	title := value(t, ctx, chromedp.Evaluate[string](`document.querySelector('`+row+` td.age time').title`))
	if !strings.Contains(title, " UTC (") || !strings.HasSuffix(title, "your time)") {
		t.Errorf("the age's title is %q; want the UTC time and the viewer's local time", title)
	}
}

// Issue 28: the Input column broke values anywhere (word-break:
// break-all), so "A-1001" read "A-1" / "001". A value is never broken
// inside a token that fits its column.
func TestAValueIsNotBrokenInsideATokenInChromium(t *testing.T) {
	s := newServer(t, refund("call_1", `{"order":"A-1001","amount_eur":25,"reason":"the customer was charged twice for one order"}`))
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url), chromedp.WaitVisible("tr.request pre.input"))
	got := value(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("tr.request pre.input")).wordBreak + "|" + getComputedStyle(document.querySelector("tr.request pre.input")).overflowWrap`))
	if got != "normal|break-word" {
		t.Errorf("the input's word-break|overflow-wrap is %q; want normal|break-word (break only a token too long for the column)", got)
	}
	// The order number is on one line: a range over its characters has one
	// client rectangle per line it spans.
	lines := value(t, ctx, chromedp.Evaluate[int](`(function () {
		var pre = document.querySelector("tr.request pre.input");
		var walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
		for (var n = walker.nextNode(); n; n = walker.nextNode()) {
			var i = n.data.indexOf("A-1001");
			if (i >= 0) {
				var r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 6);
				return r.getClientRects().length;
			}
		}
		return -1;
	})()`))
	if lines != 1 {
		t.Errorf("A-1001 spans %d lines in the list; want 1", lines)
	}
}
