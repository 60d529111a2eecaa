package redisstore_test

import (
	"errors"
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
	ttl, err := rs[0].client.PTTL(background, rs[0].prefix+":{grants}:audit").Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the audit trail's TTL: %v, %v; want at most AuditTTL", ttl, err)
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
