package approval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

// ask lists the request of run with input {"order":"A-i"}.
func ask(t *testing.T, g *approval.Grants, i int) approval.CallInfo {
	t.Helper()
	c := approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d"}`, i), Attempt: 1, RunID: fmt.Sprintf("run-%d", i), CallID: fmt.Sprintf("call_%d", i)}
	if d, err := g.Decide(context.Background(), c); d != approval.Pending || err != nil {
		t.Fatalf("%d: %v, %v", i, d, err)
	}
	return c
}

// Issue 28: a request pushed off a full list was counted, but nothing said
// which one it was, so a real request hidden by a flood could not be
// found again.
func TestARequestDroppedFromAFullListIsInTheEventsWithItsIDAndRun(t *testing.T) {
	g, clk := newGrants()
	g.MaxPending = 2
	ask(t, g, 0)
	shown := g.Requests()[0]
	clk.add(time.Second)
	ask(t, g, 1)
	if es := g.Events(0); len(es) != 0 {
		t.Fatalf("events before anything was dropped: %+v", es)
	}
	clk.add(time.Second)
	ask(t, g, 2)
	es := g.Events(0)
	if len(es) != 1 {
		t.Fatalf("events %+v; want one dropped request", es)
	}
	e := es[0]
	if e.Kind != approval.EventDropped || e.RequestID != shown.ID || e.Call.RunID != "run-0" || e.Call.CanonicalInput != `{"order":"A-0"}` ||
		!e.Since.Equal(shown.Since) || !e.At.Equal(clk.now()) || e.Max != 2 || e.By != "" || e.InputSize != len(`{"order":"A-0"}`) {
		t.Errorf("the dropped event %+v; want the request A-0 of run-0 as it was listed, dropped now from a list of 2", e)
	}
	if len(g.Audit(0)) != 0 {
		t.Errorf("Audit lists more than answers: %+v", g.Audit(0))
	}
}

func TestARefusalIsRecordedAsAnEventAndTheAnswersStayAsTheyWere(t *testing.T) {
	g, clk := newGrants()
	ask(t, g, 1)
	ask(t, g, 2)
	reqs := g.Requests()
	if _, err := g.Answer(reqs[0].ID, approval.Approved, "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Minute)
	e := g.RecordRefusal(reqs[1], "mallory", "decide")
	if e.Kind != approval.EventRefused || e.By != "mallory" || e.Action != "decide" || e.RequestID != reqs[1].ID || e.Call.RunID != "run-2" || !e.At.Equal(clk.now()) {
		t.Errorf("RecordRefusal returned %+v", e)
	}
	if es := g.Events(0); len(es) != 1 || es[0] != e {
		t.Errorf("Events %+v; want the refusal", es)
	}
	audit := g.Audit(0)
	if len(audit) != 1 || audit[0].By != "alice" || audit[0].Decision != approval.Approved {
		t.Errorf("Audit %+v; want alice's answer alone, as before", audit)
	}
	if len(g.Requests()) != 1 {
		t.Errorf("a refusal changed what waits: %+v", g.Requests())
	}
}

// A flood of requests drops thousands of them: it must not push a
// refusal out of the trail, and the trail stays bounded.
func TestAFloodOfDroppedRequestsKeepsTheRefusalsAndIsBounded(t *testing.T) {
	g, clk := newGrants()
	g.MaxPending, g.MaxAudit = 5, 10
	ask(t, g, 0)
	g.RecordRefusal(g.Requests()[0], "mallory", "open")
	for i := 1; i <= 100; i++ {
		clk.add(time.Millisecond)
		ask(t, g, i)
	}
	es := g.Events(0)
	if len(es) != 11 {
		t.Fatalf("%d events; want the 10 newest dropped and the refusal", len(es))
	}
	if es[0].Kind != approval.EventDropped || es[0].Call.RunID != "run-95" || es[9].Call.RunID != "run-86" {
		t.Errorf("the dropped events, newest first: %s ... %s; want run-95 ... run-86", es[0].Call.RunID, es[9].Call.RunID)
	}
	if last := es[10]; last.Kind != approval.EventRefused || last.By != "mallory" {
		t.Errorf("the oldest event %+v; want mallory's refusal", last)
	}
	if three := g.Events(3); len(three) != 3 || three[0].Call.RunID != "run-95" {
		t.Errorf("Events(3) = %+v", three)
	}
	if o, _ := g.Overflow(context.Background()); o.Dropped != 96 || o.Unlisted != 0 {
		t.Errorf("Overflow %+v; want 96 dropped, none unlisted", o)
	}
	clk.add(approval.DefaultAuditTTL)
	if es := g.Events(0); len(es) != 0 {
		t.Errorf("after AuditTTL: %d events kept", len(es))
	}
}

func TestAnEventKeepsTheFirstKiBOfAnInput(t *testing.T) {
	g, _ := newGrants()
	big := `{"note":"` + strings.Repeat("é", 3000) + `"}`
	c := approval.CallInfo{Tool: "refund", Input: big, Attempt: 1, RunID: "run-big"}
	if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
		t.Fatal(d)
	}
	e := g.RecordRefusal(g.Requests()[0], "mallory", "open")
	if e.InputSize != len(big) || len(e.Call.Input) > approval.EventInputBytes || len(e.Call.Input) < approval.EventInputBytes-1 ||
		!strings.HasPrefix(big, e.Call.Input) || len(e.Call.CanonicalInput) > approval.EventInputBytes {
		t.Errorf("the event keeps %d bytes of an input of %d (size said %d); want at most %d whole characters",
			len(e.Call.Input), len(big), e.InputSize, approval.EventInputBytes)
	}
	if !strings.HasSuffix(e.Call.Input, "é") {
		t.Errorf("the input was cut inside a character: %q", e.Call.Input[len(e.Call.Input)-4:])
	}
}
