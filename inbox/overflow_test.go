package inbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Issue 28: the 1,001st request silently pushed the oldest off the list,
// so an agent that floods requests could hide a real one. The list says
// how many were dropped, since when and why.
func TestAFullListSaysHowManyRequestsItDroppedAndSinceWhen(t *testing.T) {
	g := approval.NewGrants()
	g.MaxPending = 3
	h := newInbox(t, inbox.Memory(g))
	ask := func(i int) {
		c := approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d"}`, i), Attempt: 1, RunID: fmt.Sprintf("run-%d", i)}
		if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
			t.Fatalf("%d: %v", i, d)
		}
	}
	for i := range 3 {
		ask(i)
	}
	if body := get(h, "alice", "/").Body.String(); strings.Contains(body, `id="overflow"`) {
		t.Fatalf("a list that dropped nothing speaks of an overflow:\n%s", body)
	}
	ask(3)
	ask(4)
	o, _ := g.Overflow(context.Background())
	if o.Dropped != 2 || o.Max != 3 || o.Since.IsZero() || o.Last.Before(o.Since) {
		t.Fatalf("Overflow = %+v; want 2 dropped of a list of at most 3, with their times", o)
	}
	body := get(h, "alice", "/live").Body.String()
	for _, want := range []string{`id="overflow"`, "2 requests were dropped from this list because it was full (at most 3 wait; the oldest goes first)",
		o.Since.UTC().Format("2006-01-02 15:04:05 UTC")} {
		if !strings.Contains(body, want) {
			t.Errorf("the live list lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "A-0") || strings.Contains(body, "A-1&#34;") || !strings.Contains(body, "A-2&#34;") || !strings.Contains(body, "A-4&#34;") {
		t.Errorf("the list does not hold the newest three (A-2 to A-4):\n%s", body)
	}
}
