package redisstore_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// The answers of redisstore's Grants are the approvals inbox's Store.
var _ inbox.Store = (*redisstore.Grants)(nil)

func onlyRequest(t *testing.T, g *redisstore.Grants) approval.Request {
	t.Helper()
	rs, err := g.Requests(background)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("want one request, got %+v", rs)
	}
	return rs[0]
}

func TestAnAnswerOnOneReplicaIsOneDecisionForTheFleet(t *testing.T) {
	rs := newReplicas(t, redisAddr, 3)
	a, b, c := rs[0].store.Grants(), rs[1].store.Grants(), rs[2].store.Grants()
	decide(t, a, call("refund", refundInput))
	req := onlyRequest(t, b)
	if req.Call.Tool != "refund" || req.Call.CanonicalInput != `{"amount_eur":25,"order":"A-1001"}` || req.Since.IsZero() {
		t.Fatalf("request %+v", req)
	}
	const n = 6
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		g := []*redisstore.Grants{b, c}[i%2]
		wg.Go(func() {
			_, err := g.Answer(background, req.ID, approval.Approved, "alice", "ok")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, approval.ErrNotPending):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers recorded, want 1", ok)
	}
	if d := decide(t, a, call("refund", refundInput)); d != approval.Approved {
		t.Fatalf("the call after the answer: %v", d)
	}
	if d := decide(t, a, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("one answer approved two calls: %v", d)
	}
	audit, err := a.Audit(background, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].By != "alice" || audit[0].Comment != "ok" || audit[0].Decision != approval.Approved ||
		audit[0].RequestID != req.ID || audit[0].Call.Input != refundInput || audit[0].Call.IdempotencyKey != "key-1" || audit[0].At.Before(audit[0].Since) {
		t.Fatalf("audit %+v", audit)
	}
}

func TestAnAnswerCoversOnlyTheRequestShown(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	decide(t, g, call("refund", refundInput))
	shown := onlyRequest(t, g)
	retry := call("refund", refundInput)
	retry.Attempt, retry.MayHaveApplied = 2, true
	decide(t, g, retry)
	now := onlyRequest(t, g)
	if now.ID == shown.ID || !now.Since.Equal(shown.Since) {
		t.Fatalf("asked again: %s (was %s), since %v (was %v)", now.ID, shown.ID, now.Since, shown.Since)
	}
	for _, id := range []string{shown.ID, "nonsense", strings.Replace(now.ID, "a", "b", 1), "9" + now.ID} {
		if _, err := g.Answer(background, id, approval.Approved, "alice", ""); !errors.Is(err, approval.ErrNotPending) {
			t.Errorf("answer to %q: %v, want ErrNotPending", id, err)
		}
	}
	if _, err := g.Answer(background, now.ID, approval.Pending, "alice", ""); err == nil {
		t.Error("a pending answer was accepted")
	}
	if audit, _ := g.Audit(background, 0); len(audit) != 0 {
		t.Fatalf("refused answers were recorded: %+v", audit)
	}
	if _, err := g.Answer(background, now.ID, approval.Denied, "bob", "no"); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, g, retry); d != approval.Denied {
		t.Fatalf("after the denial: %v", d)
	}
}

func TestTheAuditTrailIsBoundedAndExpires(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	g.MaxAudit, g.AuditTTL = 2, time.Hour
	for _, in := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		decide(t, g, call("refund", in))
		if _, err := g.Answer(background, onlyRequest(t, g).ID, approval.Denied, "alice", ""); err != nil {
			t.Fatal(err)
		}
	}
	audit, err := g.Audit(background, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 2 || audit[0].Call.Input != `{"n":3}` || audit[1].Call.Input != `{"n":2}` {
		t.Fatalf("want the newest two, newest first: %+v", audit)
	}
	if one, _ := g.Audit(background, 1); len(one) != 1 || one[0].Call.Input != `{"n":3}` {
		t.Fatalf("limit 1: %+v", one)
	}
	keys, err := redistest.Keys(background, rs[0].client, rs[0].prefix)
	if err != nil {
		t.Fatal(err)
	}
	trails := 0
	for k, ttl := range keys {
		if strings.HasSuffix(k, ":audit") {
			trails++
			if ttl <= 0 || ttl > time.Hour {
				t.Errorf("the audit trail %s's TTL: %v; want at most AuditTTL", k, ttl)
			}
		}
	}
	if trails == 0 {
		t.Errorf("no audit trail among the keys %v", keys)
	}
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// The inbox over Redis: when Redis stops answering the pages say so, and
// an answer in flight is recorded whole or not at all.
func TestTheInboxOverRedisWhileRedisIsDown(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond))
	g := rs[0].store.Grants()
	h, err := inbox.New(g, func(*http.Request) (string, bool) { return "alice", true })
	if err != nil {
		t.Fatal(err)
	}
	serve := func(method, target string, form url.Values) *httptest.ResponseRecorder {
		var body *strings.Reader = strings.NewReader("")
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		r := httptest.NewRequest(method, target, body)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	decide(t, g, call("refund", refundInput))
	id := onlyRequest(t, g).ID
	page := serve("GET", "/request?id="+url.QueryEscape(id), nil)
	m := tokenRE.FindStringSubmatch(page.Body.String())
	if m == nil {
		t.Fatalf("no form:\n%s", page.Body)
	}
	form := url.Values{"id": {id}, "token": {m[1]}, "decision": {"approve"}}

	srv.Pause()
	if w := serve("POST", "/decide", form); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "recorded whole or not at all") {
		t.Errorf("POST with Redis paused: %d\n%s", w.Code, w.Body)
	}
	if w := serve("GET", "/", nil); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "The approvals store is unavailable") {
		t.Errorf("GET / with Redis paused: %d\n%s", w.Code, w.Body)
	}
	srv.Resume()
	rs[0].logs.waitFor(t, "INFO", "redis answers again")

	// The script may have run once Redis resumed: then all of it did.
	pending, err := g.Requests(background)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := g.Audit(background, 0)
	if err != nil {
		t.Fatal(err)
	}
	granted := decide(t, g, call("refund", refundInput)) == approval.Approved
	whole := len(pending) == 0 && len(audit) == 1 && granted
	none := len(pending) == 1 && len(audit) == 0 && !granted
	if !whole && !none {
		t.Fatalf("half an answer: %d pending, %d audit records, granted %v", len(pending), len(audit), granted)
	}
}

// Regression (issue 32, item 8): runs A and B waited on the same tool and
// input; the list showed one row, the person approved what it showed as
// run B, run A's call used the grant, and the audit said run B.
func TestAnApprovalGivenForOneRunsRequestLetsNoOtherRunsCallThrough(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	inRun := func(runID, callID string) approval.CallInfo {
		c := call("refund", refundInput)
		c.RunID, c.CallID = runID, callID
		return c
	}
	runA, runB := inRun("run-A", "call_a"), inRun("run-B", "call_b")
	decide(t, a, runA)
	decide(t, b, runB)
	reqs, err := b.Requests(background)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Call.RunID != "run-A" || reqs[1].Call.RunID != "run-B" {
		t.Fatalf("requests %+v; want two, run A's and run B's", reqs)
	}
	if _, err := b.Answer(background, reqs[1].ID, approval.Approved, "alice", "B only"); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, a, runA); d != approval.Pending {
		t.Fatalf("run A's call after run B's approval: %v; want pending", d)
	}
	if left := onlyRequest(t, b); left.Call.RunID != "run-A" {
		t.Fatalf("waiting %+v; want run A's request", left)
	}
	// Run B resumed on the other replica: the model gave its call a new ID.
	if d := decide(t, a, inRun("run-B", "call_b2")); d != approval.Approved {
		t.Fatalf("run B's resumed call: %v; want approved", d)
	}
	if d := decide(t, a, inRun("run-B", "call_b3")); d != approval.Pending {
		t.Fatalf("run B's next call: %v; want pending: one answer, one call", d)
	}
	audit, err := a.Audit(background, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Call.RunID != "run-B" || audit[0].Call.CallID != "call_b" || audit[0].Comment != "B only" {
		t.Fatalf("audit %+v; want run B's request", audit)
	}

	t.Run("outside a run, a known call ID names the request", func(t *testing.T) {
		rs := newReplicas(t, redisAddr, 1)
		g := rs[0].store.Grants()
		one, two := inRun("", "call_1"), inRun("", "call_2")
		one.CallIDKnown, two.CallIDKnown = true, true
		decide(t, g, one)
		decide(t, g, two)
		reqs, err := g.Requests(background)
		if err != nil || len(reqs) != 2 {
			t.Fatalf("requests %+v, %v; want two", reqs, err)
		}
		if _, err := g.Answer(background, reqs[1].ID, approval.Denied, "alice", ""); err != nil {
			t.Fatal(err)
		}
		if d := decide(t, g, one); d != approval.Pending {
			t.Fatalf("call_1 after call_2's denial: %v; want pending", d)
		}
		if d := decide(t, g, two); d != approval.Denied {
			t.Fatalf("call_2: %v; want denied", d)
		}
		// Continued by run.Resume without an ID of its own, the call takes
		// the paused call's, made up: the answer given for that ID is its.
		if _, err := g.Answer(background, onlyRequest(t, g).ID, approval.Approved, "alice", ""); err != nil {
			t.Fatal(err)
		}
		resumed := one
		resumed.CallIDKnown = false
		if d := decide(t, g, resumed); d != approval.Approved {
			t.Fatalf("call_1 resumed: %v; want approved", d)
		}
	})

	t.Run("outside a run, calls whose IDs were made up are one request", func(t *testing.T) {
		rs := newReplicas(t, redisAddr, 1)
		g := rs[0].store.Grants()
		decide(t, g, inRun("", "call_1"))
		decide(t, g, inRun("", "call_2"))
		if q := onlyRequest(t, g); q.Call.CallID != "call_2" {
			t.Fatalf("request %+v; want the latest call's", q)
		}
		if _, err := g.Answer(background, onlyRequest(t, g).ID, approval.Approved, "alice", ""); err != nil {
			t.Fatal(err)
		}
		if d := decide(t, g, inRun("", "call_3")); d != approval.Approved {
			t.Fatalf("the call made again: %v; want approved", d)
		}
	})

	t.Run("a program's Grant covers one call of any run, and Revoke takes back answers too", func(t *testing.T) {
		rs := newReplicas(t, redisAddr, 1)
		g := rs[0].store.Grants()
		decide(t, g, runA)
		decide(t, g, runB)
		if err := g.Grant(background, "refund", refundInput); err != nil {
			t.Fatal(err)
		}
		if left := onlyRequest(t, g); left.Call.RunID != "run-B" {
			t.Fatalf("waiting %+v; want the oldest (run A's) dropped", left)
		}
		if d := decide(t, g, runB); d != approval.Approved {
			t.Fatalf("run B with the program's grant: %v", d)
		}
		if d := decide(t, g, runA); d != approval.Pending {
			t.Fatalf("run A after the one grant was used: %v", d)
		}
		if _, err := g.Answer(background, onlyRequest(t, g).ID, approval.Approved, "alice", ""); err != nil {
			t.Fatal(err)
		}
		if n, err := g.Revoke(background, "refund", refundInput); n != 1 || err != nil {
			t.Fatalf("Revoke = %d, %v; want the answer taken back", n, err)
		}
		if d := decide(t, g, runA); d != approval.Pending {
			t.Fatalf("run A after Revoke: %v", d)
		}
	})
}

// Regression (issue 32, item 9): the inbox said "store unavailable" for
// every error of the store, redisstore's "too many decisions waiting"
// among them.
func TestAStoreErrorSaysWhatHappened(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	for i := range redisstore.DefaultMaxDecisions + 1 {
		c := call("refund", refundInput)
		c.RunID = fmt.Sprintf("run-%d", i)
		decide(t, g, c)
	}
	reqs, err := g.Requests(background)
	if err != nil || len(reqs) != redisstore.DefaultMaxDecisions+1 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	for _, q := range reqs[:redisstore.DefaultMaxDecisions] {
		if _, err := g.Answer(background, q.ID, approval.Approved, "alice", ""); err != nil {
			t.Fatal(err)
		}
	}
	last := reqs[redisstore.DefaultMaxDecisions]
	_, err = g.Answer(background, last.ID, approval.Approved, "alice", "")
	if !errors.Is(err, approval.ErrTooManyDecisions) || errors.Is(err, redisstore.ErrUnavailable) {
		t.Fatalf("the answer past the bound: %v; want approval.ErrTooManyDecisions, not an outage", err)
	}
	if err := g.Grant(background, "refund", refundInput); !errors.Is(err, approval.ErrTooManyDecisions) {
		t.Fatalf("a grant past the bound: %v; want approval.ErrTooManyDecisions", err)
	}

	// What the person sees in the inbox.
	h, err := inbox.New(g, func(*http.Request) (string, bool) { return "alice", true })
	if err != nil {
		t.Fatal(err)
	}
	serve := func(method, target string, form url.Values) *httptest.ResponseRecorder {
		body := strings.NewReader(form.Encode())
		r := httptest.NewRequest(method, target, body)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	m := tokenRE.FindStringSubmatch(serve("GET", "/request?id="+url.QueryEscape(last.ID), nil).Body.String())
	if m == nil {
		t.Fatal("no form")
	}
	w := serve("POST", "/decide", url.Values{"id": {last.ID}, "token": {m[1]}, "decision": {"approve"}})
	body := w.Body.String()
	if w.Code != http.StatusConflict || !strings.Contains(body, "too many approvals and denials") || strings.Contains(body, "unavailable") {
		t.Fatalf("POST past the bound: %d\n%s", w.Code, body)
	}
	if audit, _ := g.Audit(background, 0); len(audit) != redisstore.DefaultMaxDecisions {
		t.Fatalf("%d records; want the refused answer not recorded", len(audit))
	}
}
