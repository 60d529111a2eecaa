package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// auditJSON is what /audit.json answers.
type auditJSON struct {
	Records []map[string]any `json:"records"`
	Events  []struct {
		Kind, By, Action, Tool string
		RequestID              string `json:"request_id"`
		RunID                  string `json:"run_id"`
		Max                    int
		InputSize              int `json:"input_size"`
	} `json:"events"`
}

func readAuditJSON(t *testing.T, h http.Handler, user string) auditJSON {
	t.Helper()
	w := get(h, user, "/audit.json")
	var a auditJSON
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != http.StatusOK {
		t.Fatalf("audit.json: %d %v\n%s", w.Code, err, w.Body)
	}
	return a
}

// Issue 28: a refused decision was answered 403 and logged, and its page
// said "Your attempt was recorded", but the audit trail had no trace of it.
func TestARefusalIsInTheAuditTrailOfThoseWhoMayDecideTheRequest(t *testing.T) {
	lookup := approval.CallInfo{Tool: "lookup", CallID: "call_2", Input: `{"order":"A-1001"}`, Attempt: 1, RunID: "run-7"}
	g := waiting(t, refundCall(refundInput, 1), lookup)
	// bob was in finance when he opened the refund, and left it before he
	// approved.
	var bobInFinance atomic.Bool
	bobInFinance.Store(true)
	h := newInbox(t, inbox.Memory(g), inbox.WithAuthorize(func(user string, req approval.Request) bool {
		return user == "alice" || user == "bob" && (req.Call.Tool == "lookup" || bobInFinance.Load())
	}))
	rs := g.Requests()
	refundID := rs[0].ID
	bobs := form(t, h, "bob", refundID, "approve", "")
	bobInFinance.Store(false)
	if w := send(h, "bob", http.MethodPost, "/decide", bobs); w.Code != http.StatusForbidden {
		t.Fatalf("bob deciding the refund: %d", w.Code)
	}
	w := get(h, "bob", "/request?id="+url.QueryEscape(refundID))
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "Your attempt was recorded in the audit trail.") {
		t.Fatalf("bob opening the refund: %d\n%s", w.Code, w.Body)
	}

	body := get(h, "alice", "/audit").Body.String()
	for _, want := range []string{`<tr class="record refused" data-request="` + refundID + `"`, "tried to decide this request, which is not theirs to decide (403)",
		"tried to open this request", `<td dir="auto" class="by">bob</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("alice's audit trail lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, `<tr class="record refused"`); n != 2 {
		t.Errorf("alice's audit trail has %d refusals; want bob's two", n)
	}
	a := readAuditJSON(t, h, "alice")
	if len(a.Records) != 0 || len(a.Events) != 2 {
		t.Fatalf("alice's audit.json: %d records, %d events; want no answer and bob's two refusals", len(a.Records), len(a.Events))
	}
	if e := a.Events[1]; e.Kind != "refused" || e.By != "bob" || e.Action != "decide" || e.RequestID != refundID || e.Tool != "refund" || e.RunID != "run-7" {
		t.Errorf("the older event in audit.json: %+v; want bob's decision refused", e)
	}
	if body := get(h, "alice", "/audit?by=bob").Body.String(); !strings.Contains(body, "2 of 2 entries match") {
		t.Errorf("alice's audit trail filtered to bob does not keep his two refusals:\n%s", body)
	}
	// Not bob's to see: he may not decide refunds.
	if body := get(h, "bob", "/audit").Body.String(); strings.Contains(body, refundID) {
		t.Errorf("bob's audit trail shows the refund's refusals:\n%s", body)
	}
	if a := readAuditJSON(t, h, "bob"); len(a.Events) != 0 {
		t.Errorf("bob's audit.json shows events: %+v", a.Events)
	}
	if len(g.Audit(0)) != 0 || len(g.Requests()) != 2 {
		t.Error("a refusal decided something")
	}
}

// noEvents is a Store that keeps answers only.
type noEvents struct{ s inbox.Store }

func (n noEvents) Requests(ctx context.Context) ([]approval.Request, error) { return n.s.Requests(ctx) }
func (n noEvents) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	return n.s.Answer(ctx, id, d, by, comment)
}
func (n noEvents) Audit(ctx context.Context, limit int) ([]approval.Record, error) {
	return n.s.Audit(ctx, limit)
}

// refusalsDown is a Store whose RecordRefusal fails.
type refusalsDown struct{ *flaky }

func (refusalsDown) RecordRefusal(context.Context, approval.Request, string, string) (approval.Event, error) {
	return approval.Event{}, errDown
}
func (refusalsDown) Events(context.Context, int) ([]approval.Event, error) { return nil, nil }

func TestARefusalPageSaysWhetherTheAuditTrailHasIt(t *testing.T) {
	only := inbox.WithAuthorize(func(user string, _ approval.Request) bool { return user == "alice" })
	for _, c := range []struct {
		name  string
		store func(*approval.Grants) inbox.Store
		want  string
	}{
		{"a store that keeps no events", func(g *approval.Grants) inbox.Store { return noEvents{inbox.Memory(g)} }, "Your attempt was logged."},
		{"a store that fails to record it", func(g *approval.Grants) inbox.Store { return refusalsDown{&flaky{Store: inbox.Memory(g)}} },
			"the approvals store did not confirm it in the audit trail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := waiting(t, refundCall(refundInput, 1))
			h := newInbox(t, c.store(g), only)
			w := get(h, "bob", "/request?id="+url.QueryEscape(onlyRequest(t, g).ID))
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), c.want) || strings.Contains(w.Body.String(), "recorded in the audit trail.") {
				t.Errorf("%d; want 403 saying %q:\n%s", w.Code, c.want, w.Body)
			}
		})
	}
}

func TestARequestDroppedFromAFullListIsInTheAuditTrail(t *testing.T) {
	g := approval.NewGrants()
	g.MaxPending = 2
	var dropped string
	for i := range 3 {
		c := approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d"}`, i), Attempt: 1, RunID: fmt.Sprintf("run-%d", i)}
		if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
			t.Fatal(d)
		}
		if i == 0 {
			dropped = g.Requests()[0].ID
		}
	}
	h := newInbox(t, inbox.Memory(g))
	body := get(h, "alice", "/audit").Body.String()
	for _, want := range []string{`<tr class="record dropped"`, "from the list, undecided, because it was full (at most 2 wait)", `<td dir="auto" class="run">run-0</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit trail lacks %q:\n%s", want, body)
		}
	}
	if body := get(h, "alice", "/audit?run=run-1").Body.String(); strings.Contains(body, "record dropped") {
		t.Errorf("the trail filtered to run-1 shows run-0's drop:\n%s", body)
	}
	// The page of the request dropped, from a link kept, says what became
	// of it.
	w := get(h, "alice", "/request?id="+url.QueryEscape(dropped))
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "This request was dropped, undecided, from the list at ") ||
		!strings.Contains(w.Body.String(), "because the list was full (at most 2 wait)") {
		t.Errorf("the dropped request's page: %d\n%s", w.Code, w.Body)
	}
	a := readAuditJSON(t, h, "alice")
	if len(a.Events) != 1 || a.Events[0].Kind != "dropped" || a.Events[0].RunID != "run-0" || a.Events[0].Max != 2 || a.Events[0].By != "" {
		t.Errorf("audit.json's events: %+v; want run-0's request dropped from a list of 2", a.Events)
	}
}

// unlisted is a Store that keeps more requests than it lists, as
// redisstore's does.
type unlisted struct {
	inbox.Store
	n int
}

func (u unlisted) Overflow(context.Context) (approval.Overflow, error) {
	return approval.Overflow{Max: 1000, Unlisted: u.n}, nil
}

func TestTheListSaysHowManyRequestsWaitUnlisted(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	for n, want := range map[int]string{
		1:   "1 more request waits but is not listed: this list shows the newest 1",
		250: "250 more requests wait but are not listed: this list shows the newest 1",
	} {
		body := get(newInbox(t, unlisted{inbox.Memory(g), n}), "alice", "/live").Body.String()
		if !strings.Contains(body, `id="unlisted"`) || !strings.Contains(body, want) || strings.Contains(body, `id="overflow"`) {
			t.Errorf("%d unlisted: the list lacks %q, or speaks of a drop:\n%s", n, want, body)
		}
	}
	if body := get(newInbox(t, unlisted{inbox.Memory(g), 0}), "alice", "/").Body.String(); strings.Contains(body, `id="unlisted"`) {
		t.Errorf("none unlisted, yet the list says some are:\n%s", body)
	}
}
