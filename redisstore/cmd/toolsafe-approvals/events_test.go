package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// Issue 28, in a terminal: list never said that a full list had dropped
// requests, and audit showed answers only.
func TestListSaysWhatAFullListDroppedAndAuditNamesItAndARefusal(t *testing.T) {
	g, cli := fleet(t)
	g.MaxPending = 2
	for _, run := range []string{"run-0", "run-1", "run-2"} {
		c := approval.CallInfo{Tool: "refund", CallID: "call_" + run, Input: `{"order":"A-1001"}`, Attempt: 1, RunID: run}
		if d, err := g.Decide(context.Background(), c); err != nil || d != approval.Pending {
			t.Fatal(d, err)
		}
	}
	reqs, err := g.Requests(context.Background())
	if err != nil || len(reqs) != 2 {
		t.Fatalf("requests %+v, %v", reqs, err)
	}
	if _, err := g.RecordRefusal(context.Background(), reqs[1], "mallory\u202e", "decide"); err != nil {
		t.Fatal(err)
	}
	// The command's own MaxPending is the default, 1,000: it says the cap
	// the agents' list reached.
	code, out, _ := cli("list")
	if code != exitOK || !strings.Contains(out, "dropped   1 request was dropped from this list because it was full (at most 2 wait; the oldest goes first), the first at ") ||
		strings.Contains(out, "unlisted") {
		t.Errorf("list: %d\n%s", code, out)
	}
	if code, out, _ := cli("list", "-run", "run-9"); code != exitOK || !strings.Contains(out, "Nothing that matches waits") || !strings.Contains(out, "dropped   1 request was dropped") {
		t.Errorf("list of nothing that matches: %d\n%s", code, out)
	}
	code, out, _ = cli("audit")
	if code != exitOK || !strings.Contains(out, `mallory\u202e was refused: tried to decide refund {"order":"A-1001"}  run run-2  call call_run-2  attempt 1  request `+reqs[1].ID) ||
		!strings.Contains(out, `dropped, undecided, from the full list (at most 2 wait): refund {"order":"A-1001"}  run run-0`) ||
		!strings.Contains(out, "warning  The approver's name holds") || strings.Contains(out, "\u202e") {
		t.Errorf("audit: %d\n%s", code, out)
	}
	if lines := strings.Count(out, "\n"); lines != 3 {
		t.Errorf("audit printed %d lines; want the refusal, its warning and the drop:\n%s", lines, out)
	}
	if code, out, _ := cli("audit", "-n", "1"); code != exitOK || !strings.Contains(out, "mallory") || strings.Contains(out, "dropped") {
		t.Errorf("audit -n 1: %d; want the refusal alone, the newest:\n%s", code, out)
	}
}

func TestListSaysHowManyWaitUnlisted(t *testing.T) {
	var b strings.Builder
	printOverflow(&b, approval.Overflow{Max: 1000, Unlisted: 37}, 1000)
	if got := b.String(); got != "unlisted  37 more requests wait but are not listed: this list shows the newest 1000; older ones wait unseen until they expire or newer ones are decided\n" {
		t.Errorf("printOverflow said %q", got)
	}
	b.Reset()
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	printOverflow(&b, approval.Overflow{Dropped: 3, Max: 5, Since: at, Last: at.Add(time.Minute)}, 5)
	if got := b.String(); !strings.HasPrefix(got, "dropped   3 requests were dropped from this list because it was full (at most 5 wait; the oldest goes first), the first at 2026-12-03T09:00:00Z, the latest at 2026-12-03T09:01:00Z") {
		t.Errorf("printOverflow said %q", got)
	}
	b.Reset()
	printOverflow(&b, approval.Overflow{Max: 5}, 2)
	if b.Len() != 0 {
		t.Errorf("nothing dropped nor unlisted, yet it said %q", b.String())
	}
}
