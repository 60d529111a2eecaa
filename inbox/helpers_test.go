package inbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

const refundInput = `{"order":"A-1001","amount_eur":25}`

// byHeader is the tests' identity: the X-User header, for known users.
func byHeader(r *http.Request) (string, bool) {
	u := r.Header.Get("X-User")
	switch u {
	case "alice", "bob", `<b onmouseover="x">eve</b>`:
		return u, true
	}
	return "", false
}

func refundCall(input string, attempt int) approval.CallInfo {
	return approval.CallInfo{Tool: "refund", CallID: "call_1", Input: input, Attempt: attempt, RunID: "run-7", IdempotencyKey: "key-1", Destructive: true}
}

// waiting returns Grants with the calls pending.
func waiting(t *testing.T, calls ...approval.CallInfo) *approval.Grants {
	t.Helper()
	g := approval.NewGrants()
	for _, c := range calls {
		if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
			t.Fatalf("%v is not pending: %v", c, d)
		}
	}
	return g
}

func newInbox(t *testing.T, s inbox.Store, opts ...inbox.Option) *inbox.Handler {
	t.Helper()
	h, err := inbox.New(s, byHeader, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func send(h http.Handler, user, method, target string, form url.Values, header ...string) *httptest.ResponseRecorder {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != "" {
		r.Header.Set("X-User", user)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func get(h http.Handler, user, target string) *httptest.ResponseRecorder {
	return send(h, user, http.MethodGet, target, nil)
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// form returns the decision form user is shown for request id.
func form(t *testing.T, h http.Handler, user, id, decision, comment string) url.Values {
	t.Helper()
	w := get(h, user, "/request?id="+url.QueryEscape(id))
	m := tokenRE.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("GET /request: %d, no token:\n%s", w.Code, w.Body)
	}
	return url.Values{"id": {id}, "token": {m[1]}, "decision": {decision}, "comment": {comment}}
}

func onlyRequest(t *testing.T, g *approval.Grants) approval.Request {
	t.Helper()
	rs := g.Requests()
	if len(rs) != 1 {
		t.Fatalf("want one request, got %+v", rs)
	}
	return rs[0]
}

// flaky is a Store that fails while down is set, and records nothing then.
type flaky struct {
	inbox.Store
	down       atomic.Bool
	answerDown atomic.Bool // only Answer fails
}

var errDown = errors.New("dial tcp 127.0.0.1:6379: connection refused")

func (f *flaky) Requests(ctx context.Context) ([]approval.Request, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Requests(ctx)
}

func (f *flaky) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	if f.down.Load() || f.answerDown.Load() {
		return approval.Record{}, errDown
	}
	return f.Store.Answer(ctx, id, d, by, comment)
}

func (f *flaky) Audit(ctx context.Context, limit int) ([]approval.Record, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Audit(ctx, limit)
}
