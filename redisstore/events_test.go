package redisstore_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/redisstore"
)

// The events of redisstore's Grants are the approvals inbox's.
var (
	_ inbox.EventStore = (*redisstore.Grants)(nil)
	_ inbox.Overflower = (*redisstore.Grants)(nil)
)

func events(t *testing.T, g *redisstore.Grants, limit int) []approval.Event {
	t.Helper()
	es, err := g.Events(background, limit)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func overflow(t *testing.T, g *redisstore.Grants) approval.Overflow {
	t.Helper()
	o, err := g.Overflow(background)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// inRun is the refund call of run: the same tool and input, so the same
// group of keys, whatever the run.
func inRun(run string) approval.CallInfo {
	c := call("refund", refundInput)
	c.RunID, c.CallID = run, "call_"+run
	return c
}

// Issue 28: a full list over Redis dropped the oldest request silently:
// nothing counted it, and nothing said which request it was.
func TestAFullListOverRedisCountsWhatItDroppedAndNamesEachOne(t *testing.T) {
	rs := newReplicas(t, redisAddr, 3)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	a.MaxPending, b.MaxPending = 3, 3
	if o := overflow(t, b); o.Dropped != 0 || o.Max != 3 || !o.Since.IsZero() || o.Unlisted != 0 {
		t.Fatalf("Overflow before anything waits: %+v", o)
	}
	shown := map[string]string{} // run → the ID it was listed with
	before := time.Now()
	for i := range 5 {
		decide(t, []*redisstore.Grants{a, b}[i%2], inRun(fmt.Sprintf("run-%d", i)))
		for _, q := range requests(t, a) {
			shown[q.Call.RunID] = q.ID
		}
	}
	if got := requests(t, b); len(got) != 3 || got[0].Call.RunID != "run-2" {
		t.Fatalf("requests %+v; want run-2 to run-4", got)
	}
	o := overflow(t, a)
	if o.Dropped != 2 || o.Max != 3 || o.Unlisted != 0 || o.Since.Before(before.Add(-time.Second)) || o.Last.Before(o.Since) {
		t.Errorf("Overflow %+v; want 2 dropped from a list of 3, with their times, none unlisted", o)
	}
	// A replica of another MaxPending (the toolsafe-approvals command's
	// default) is told the cap that was reached.
	if o := overflow(t, rs[2].store.Grants()); o.Dropped != 2 || o.Max != 3 || o.Unlisted != 0 {
		t.Errorf("Overflow read with the default MaxPending: %+v; want 2 dropped from a list of 3", o)
	}
	es := events(t, b, 0)
	if len(es) != 2 {
		t.Fatalf("events %+v; want the two requests dropped", es)
	}
	for i, run := range []string{"run-1", "run-0"} {
		e := es[i]
		if e.Kind != approval.EventDropped || e.Call.RunID != run || e.RequestID != shown[run] || e.Max != 3 || e.By != "" ||
			e.Call.CanonicalInput != `{"amount_eur":25,"order":"A-1001"}` || e.InputSize != len(refundInput) || e.Since.IsZero() || e.At.Before(e.Since) {
			t.Errorf("event %d: %+v; want %s dropped, with the ID it was listed with (%s)", i, e, run, shown[run])
		}
	}
	if one := events(t, a, 1); len(one) != 1 || one[0].Call.RunID != "run-1" {
		t.Errorf("Events(1) = %+v", one)
	}
	if audit, _ := a.Audit(background, 0); len(audit) != 0 {
		t.Errorf("Audit lists more than answers: %+v", audit)
	}
}

func TestRequestsThatWaitUnlistedOverRedisAreCounted(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	g.MaxPending = 2
	for i := range 6 { // over several of the 16 groups: at most 2 wait in each
		decide(t, g, call("refund", fmt.Sprintf(`{"order":"B-%d"}`, i)))
	}
	o := overflow(t, g)
	waiting := 6 - o.Dropped
	if len(requests(t, g)) != 2 || o.Unlisted != waiting-2 || o.Unlisted <= 0 {
		t.Errorf("Overflow %+v with %d listed; want the %d that wait beyond the 2 listed counted unlisted", o, len(requests(t, g)), waiting-2)
	}
}

func TestARefusalOverRedisIsKeptApartFromAFloodOfDroppedRequests(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	a.MaxPending, a.MaxAudit = 2, 5
	b.MaxAudit = 5
	decide(t, a, inRun("run-x"))
	req := onlyRequest(t, a)
	e, err := a.RecordRefusal(background, req, "mallory", "decide")
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != approval.EventRefused || e.By != "mallory" || e.Action != "decide" || e.RequestID != req.ID || e.Call.RunID != "run-x" ||
		!e.Since.Equal(req.Since.Truncate(time.Millisecond)) || e.At.IsZero() {
		t.Errorf("RecordRefusal returned %+v", e)
	}
	for i := range 20 {
		decide(t, a, inRun(fmt.Sprintf("run-%d", i)))
	}
	es := events(t, b, 0)
	if len(es) != 6 {
		t.Fatalf("%d events; want the 5 newest drops and mallory's refusal", len(es))
	}
	refusals := 0
	for _, e := range es {
		if e.Kind == approval.EventRefused {
			refusals++
			if e.By != "mallory" || e.RequestID != req.ID {
				t.Errorf("the refusal read through b: %+v", e)
			}
		}
	}
	if refusals != 1 || es[0].Kind != approval.EventDropped || es[0].Call.RunID != "run-17" {
		t.Errorf("events %+v; want mallory's refusal kept and the newest drop (run-17) first", es)
	}
	if o := overflow(t, b); o.Dropped != 19 {
		t.Errorf("Overflow %+v; want 19 dropped", o)
	}
}

func TestADroppedRequestOverRedisKeepsTheFirstKiBOfItsInput(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	g.MaxPending = 1
	big := `{"note":"` + strings.Repeat("é", 3000) + `"}`
	first := call("refund", big)
	first.RunID = "run-big"
	decide(t, g, first)
	second := first
	second.RunID = "run-next"
	decide(t, g, second)
	es := events(t, g, 0)
	if len(es) != 1 {
		t.Fatalf("events %+v", es)
	}
	e := es[0]
	if e.InputSize != len(big) || len(e.Call.Input) > approval.EventInputBytes || len(e.Call.Input) < approval.EventInputBytes-1 ||
		!strings.HasPrefix(big, e.Call.Input) || !strings.HasSuffix(e.Call.Input, "é") || len(e.Call.CanonicalInput) > approval.EventInputBytes {
		t.Errorf("the event keeps %d bytes (%q...) of an input of %d, size said %d; want at most %d, whole characters",
			len(e.Call.Input), e.Call.Input[:20], len(big), e.InputSize, approval.EventInputBytes)
	}
}

// The inbox over Redis records a refusal where every replica's inbox
// shows it, to those who may decide the request.
func TestTheInboxOverRedisRecordsARefusalForTheFleet(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	decide(t, a, inRun("run-7"))
	id := onlyRequest(t, a).ID
	identity := func(r *http.Request) (string, bool) { u := r.Header.Get("X-User"); return u, u != "" }
	var bobMay atomic.Bool
	bobMay.Store(true)
	authorize := inbox.WithAuthorize(func(user string, _ approval.Request) bool { return user == "alice" || user == "bob" && bobMay.Load() })
	ha, err := inbox.New(a, identity, authorize)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := inbox.New(b, identity, authorize)
	if err != nil {
		t.Fatal(err)
	}
	get := func(h http.Handler, user, target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("X-User", user)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	m := tokenRE.FindStringSubmatch(get(ha, "bob", "/request?id="+url.QueryEscape(id)).Body.String())
	if m == nil {
		t.Fatal("no form for bob")
	}
	bobMay.Store(false)
	form := url.Values{"id": {id}, "token": {m[1]}, "decision": {"approve"}}
	r := httptest.NewRequest(http.MethodPost, "/decide", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-User", "bob")
	w := httptest.NewRecorder()
	ha.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "recorded in the audit trail") {
		t.Fatalf("bob's approval after he left the group: %d\n%s", w.Code, w.Body)
	}
	body := get(hb, "alice", "/audit").Body.String()
	if !strings.Contains(body, `<tr class="record refused" data-request="`+id+`"`) || !strings.Contains(body, "tried to decide this request") {
		t.Errorf("alice's audit page on the other replica lacks bob's refusal:\n%s", body)
	}
	if body := get(hb, "alice", "/audit.json").Body.String(); !strings.Contains(body, `"events":[{"kind":"refused","at":`) || !strings.Contains(body, `"by":"bob","action":"decide"`) {
		t.Errorf("audit.json lacks the refusal: %s", body)
	}
	if body := get(hb, "bob", "/audit").Body.String(); strings.Contains(body, id) {
		t.Errorf("bob's audit page shows a request he may not decide:\n%s", body)
	}
	if audit, _ := b.Audit(background, 0); len(audit) != 0 || len(requests(t, b)) != 1 {
		t.Errorf("a refusal decided something: audit %+v", audit)
	}
}
