package browsertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/toolsafe/toolsafe/approval"
)

// Issue 28: a person finds what they look for among 1,000 waiting
// requests: the filter form narrows the list to one run's requests, the
// page says how many match of how many wait, and the rest of the 1,000 are
// on pages of their own. Writes list.png (the README's screenshot) with
// -screenshots.
func TestAPersonFindsOneRunsRequestsAmongAThousandInChromium(t *testing.T) {
	s := newServer(t)
	for i := range 1000 {
		c := approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d","amount_eur":%d}`, 1000+i, 5+i%90),
			Attempt: 1, RunID: fmt.Sprintf("run-%d", i%40), CallID: fmt.Sprintf("call_%d", i), Destructive: true}
		if i%10 == 3 {
			c.Tool = "cancel_subscription"
		}
		s.ask(t, c)
	}
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url), chromedp.WaitVisible("#filter"))
	contains(t, "the list of 1,000", text(t, ctx, "#pending h1"), "1000")
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.request").length`)); n != 50 {
		t.Errorf("the first page shows %d rows; want 50", n)
	}
	run(t, ctx,
		chromedp.SendKeys(`#filter input[name="run"]`, "run-7"),
		chromedp.SendKeys(`#filter input[name="tool"]`, "refund"),
		chromedp.Click(`#filter button`),
		chromedp.WaitVisible("#clear"))
	head := text(t, ctx, "#pending h1")
	contains(t, "the filtered list's heading", head, "25", "of 1000, filtered")
	rows := value(t, ctx, chromedp.Evaluate[string](`Array.prototype.map.call(document.querySelectorAll("tr.request td.run"), function (td) { return td.textContent; }).join(",")`))
	if strings.Count(rows, "run-7") != 25 || strings.ReplaceAll(strings.ReplaceAll(rows, "run-7", ""), ",", "") != "" {
		t.Errorf("the filtered rows' runs are %q; want 25 of run-7 only", rows)
	}
	save(t, "list.png", value(t, ctx, chromedp.FullScreenshot(100)))
}

// Issue 28: a 200 KB input made the request page 46,000 px tall, with the
// amount and the payee after the padding. In Chromium the page of such a
// request fits a screen or two, the amount and the payee are in the first
// screen, and the padding opens on a click. Writes huge.png (the README's
// screenshot) with -screenshots.
func TestAHugeInputFitsTheRequestPageInChromium(t *testing.T) {
	input := fmt.Sprintf(`{"note":%q,"amount_eur":2500,"payee":"Acme Corp","order":"A-1001"}`, strings.Repeat("padding ", 25000))
	s := newServer(t, refund("call_1", input))
	ctx := tab(t, map[string]any{"X-User": "alice"})
	run(t, ctx, chromedp.Navigate(s.url), chromedp.Click("a.review", chromedp.NodeVisible), chromedp.WaitVisible("#summary"))
	got := value(t, ctx, chromedp.Evaluate[string](`(function () {
		var amount = Array.prototype.find.call(document.querySelectorAll("dl.fields dt"), function (dt) { return dt.textContent === "amount_eur"; });
		return [document.documentElement.scrollHeight < 2400, amount && amount.getBoundingClientRect().top < window.innerHeight].join("|");
	})()`))
	if got != "true|true" {
		t.Errorf("the page of a 200 KB input (shorter than 2,400 px | the amount in the first screen): %s", got)
	}
	save(t, "huge.png", value(t, ctx, chromedp.FullScreenshot(100)))
	run(t, ctx, chromedp.Click("dl.fields details summary", chromedp.NodeVisible))
	if open := value(t, ctx, chromedp.Evaluate[bool](`document.querySelector("dl.fields details").open`)); !open {
		t.Error("the folded padding does not open on a click")
	}
}
