package inbox_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

var orderNumber = regexp.MustCompile(`([A-Z])-(\d{4})`)

// orders returns the order numbers of the list's rows, in the page's order.
func orders(body string) []string {
	rows := strings.Split(body, `<tr class="request"`)[1:]
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if m := orderNumber.FindString(r); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Issue 28: with 1,000 requests the list was one page 99,000 px tall, and
// nothing found "everything from run X". The list filters by tool, run,
// text and age, sorts, and shows PageSize rows a page with links to the
// others; the count says how many match of how many wait.
func TestTheListFiltersSortsAndPages(t *testing.T) {
	g := approval.NewGrants()
	ctx := context.Background()
	for i := range 120 {
		tool := "refund"
		if i%6 == 5 {
			tool = "cancel"
		}
		c := approval.CallInfo{Tool: tool, Input: fmt.Sprintf(`{"order":"A-%d"}`, 1000+i), Attempt: 1,
			RunID: fmt.Sprintf("run-%d", i), CallID: fmt.Sprintf("call_%d", i)}
		if d, _ := g.Decide(ctx, c); d != approval.Pending {
			t.Fatalf("%d: %v", i, d)
		}
	}
	h := newInbox(t, inbox.Memory(g))
	for _, tc := range []struct {
		query      string
		count      string
		rows       int
		first      string
		next, prev bool
	}{
		{"/", `<span class="count">120</span>`, inbox.PageSize, "A-1000", true, false},
		{"/?page=3", `<span class="count">120</span>`, 20, "A-1100", false, true},
		{"/?sort=newest", `<span class="count">120</span>`, inbox.PageSize, "A-1119", true, false},
		{"/?tool=cancel", `<span class="count">20</span> <span class="of">of 120, filtered</span>`, 20, "A-1005", false, false},
		{"/?run=run-7", `<span class="count">1</span>`, 1, "A-1007", false, false},
		{"/?q=a-1042", `<span class="count">1</span>`, 1, "A-1042", false, false},
		{"/?older=1h", `<span class="count">0</span>`, 0, "", false, false},
	} {
		body := get(h, "alice", tc.query).Body.String()
		got := orders(body)
		if !strings.Contains(body, tc.count) || len(got) != tc.rows || (tc.rows > 0 && got[0] != tc.first) {
			t.Errorf("%s: %d rows, first %v; want %s, %d rows, first %s", tc.query, len(got), got[:min(1, len(got))], tc.count, tc.rows, tc.first)
		}
		if strings.Contains(body, `rel="next"`) != tc.next || strings.Contains(body, `rel="prev"`) != tc.prev {
			t.Errorf("%s: next %v, previous %v; want %v, %v", tc.query, strings.Contains(body, `rel="next"`), strings.Contains(body, `rel="prev"`), tc.next, tc.prev)
		}
	}
	if body := get(h, "alice", "/?tool=refund").Body.String(); !strings.Contains(body, `rel="next" href="?page=2&amp;tool=refund"`) {
		t.Errorf("page 1 of the refunds does not link page 2 with its filter:\n%s", body)
	}
	if body := get(h, "alice", "/?tool=refund&page=2").Body.String(); !strings.Contains(body, `rel="prev" href="?tool=refund"`) || strings.Contains(body, `rel="next"`) {
		t.Errorf("page 2 of the 100 refunds does not link page 1 alone:\n%s", body)
	}
	// The live part polls with the filter the page was opened with.
	if body := get(h, "alice", "/?tool=cancel&q=A-10").Body.String(); !strings.Contains(body, `data-src="live?q=A-10&amp;tool=cancel"`) {
		t.Errorf("the filtered list's live part does not poll with its filter:\n%s", body)
	}
	if body := get(h, "alice", "/?older=soon").Body.String(); !strings.Contains(body, "must be a duration such as 10m") {
		t.Errorf("a bad age filter is not explained")
	}
}

// The audit trail filters by tool, run, who decided and text, and pages.
func TestTheAuditTrailFiltersByWhoDecided(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1), approval.CallInfo{Tool: "cancel", Input: `{"order":"B-7"}`, RunID: "run-9", CallID: "call_9", Attempt: 1})
	for i, q := range g.Requests() {
		by := []string{"alice", "bob"}[i%2]
		if _, err := g.Answer(q.ID, approval.Approved, by, "checked"); err != nil {
			t.Fatal(err)
		}
	}
	h := newInbox(t, inbox.Memory(g))
	body := get(h, "alice", "/audit?by=bob").Body.String()
	if !strings.Contains(body, "1 of 2 entries match") || strings.Count(body, `<tr class="record`) != 1 {
		t.Errorf("the audit trail filtered by bob:\n%s", body)
	}
}
