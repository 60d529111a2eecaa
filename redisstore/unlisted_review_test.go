package redisstore_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Over Redis, a request pushed out of the listed newest MaxPending by
// newer ones in other groups still waits, unlisted: a form opened for it
// before must not decide it unseen, past who may decide it and the second
// confirmation of a call that may have been applied.
func TestTheInboxOverRedisDoesNotDecideARequestItNoLongerLists(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	g.MaxPending = 1
	c := inRun("run-7")
	c.Destructive, c.MayHaveApplied, c.Attempt = true, true, 2
	decide(t, g, c)
	id := onlyRequest(t, g).ID
	var bobMay atomic.Bool
	bobMay.Store(true)
	h, err := inbox.New(g, func(r *http.Request) (string, bool) { u := r.Header.Get("X-User"); return u, u != "" },
		inbox.WithAuthorize(func(user string, _ approval.Request) bool { return user == "alice" || bobMay.Load() }))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(method, target string, form url.Values) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-User", "bob")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	m := tokenRE.FindStringSubmatch(serve("GET", "/request?id="+url.QueryEscape(id), nil).Body.String())
	if m == nil {
		t.Fatal("no form for bob")
	}
	// Newer requests of other inputs (other groups) push it out of the list.
	for i := 0; ; i++ {
		decide(t, g, call("refund", fmt.Sprintf(`{"order":"B-%d","amount_eur":1}`, i)))
		o, err := g.Overflow(background)
		if err != nil {
			t.Fatal(err)
		}
		if o.Unlisted > 0 && !slices.ContainsFunc(requests(t, g), func(q approval.Request) bool { return q.ID == id }) {
			break
		}
		if i == 64 {
			t.Fatal("the request never went unlisted")
		}
	}
	bobMay.Store(false) // bob left the approver group
	w := serve("POST", "/decide", url.Values{"id": {id}, "token": {m[1]}, "decision": {"approve"}})
	if audit, _ := g.Audit(background, 0); len(audit) != 0 || w.Code == http.StatusSeeOther {
		t.Fatalf("bob, no longer allowed, approved a may-have-applied call without confirming it: %d, audit %+v", w.Code, audit)
	}
}
