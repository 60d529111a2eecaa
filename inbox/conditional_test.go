package inbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// countingClient is an HTTP client whose connections count the bytes the
// server sent them, headers included: what a poll costs on the wire.
func countingClient(read *atomic.Int64) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{c, read}, nil
		},
	}}
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// poll GETs path as alice, with If-None-Match etag when it is not empty,
// and returns the status, the ETag, the body and the bytes on the wire.
func poll(t *testing.T, srv *httptest.Server, path, etag string) (int, string, string, int64) {
	t.Helper()
	var read atomic.Int64
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-User", "alice")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := countingClient(&read).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("ETag"), string(body), read.Load()
}

// Issue 28: each poll of the list downloaded the whole list (575 KiB
// every 2 s per viewer with 1,000 requests), and the list changed on
// every poll because each row's age did. Now the live part, requests.json
// and audit.json carry an ETag; a poll that names it gets 304 and no body,
// under 1 KiB on the wire with 1,000 requests waiting; a new request
// changes the ETag.
func TestAnUnchangedListCostsAPollUnderOneKiB(t *testing.T) {
	g := approval.NewGrants()
	for i := range 1000 {
		c := refundCall(fmt.Sprintf(`{"order":"A-%d","amount_eur":25}`, 1000+i), 1)
		c.RunID = fmt.Sprintf("run-%d", i)
		c.CallID = fmt.Sprintf("call_%d", i)
		if d, _ := g.Decide(context.Background(), c); d != approval.Pending {
			t.Fatalf("call %d is not pending: %v", i, d)
		}
	}
	g.Grant("lookup", `{"q":"x"}`) // something in the audit trail too
	srv := httptest.NewServer(newInbox(t, inbox.Memory(g)))
	defer srv.Close()

	for _, path := range []string{"/live", "/requests.json", "/audit.json"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			status, etag, body, full := poll(t, srv, path, "")
			if status != http.StatusOK || etag == "" {
				t.Fatalf("first GET %s: %d, ETag %q; want 200 with an ETag", path, status, etag)
			}
			if path != "/audit.json" && !strings.Contains(body, "A-1000") {
				t.Fatalf("first GET %s does not show the request waiting longest", path)
			}
			status, again, body, bytes := poll(t, srv, path, etag)
			if status != http.StatusNotModified || body != "" {
				t.Fatalf("GET %s with If-None-Match of its ETag: %d with %d bytes of body; want 304 and none", path, status, len(body))
			}
			if again != etag {
				t.Errorf("the 304's ETag is %q; want %q", again, etag)
			}
			if bytes >= 1024 {
				t.Errorf("an unchanged poll of %s took %d bytes on the wire; want under 1 KiB (the full answer: %d)", path, bytes, full)
			}
			t.Logf("%s: %d bytes in full, %d unchanged", path, full, bytes)
		})
	}

	_, before, _, _ := poll(t, srv, "/live?sort=newest", "")
	if d, _ := g.Decide(context.Background(), refundCall(`{"order":"B-1","amount_eur":5}`, 1)); d != approval.Pending {
		t.Fatalf("the new call is not pending: %v", d)
	}
	status, after, body, _ := poll(t, srv, "/live?sort=newest", before)
	if status != http.StatusOK || after == before || !strings.Contains(body, "B-1") {
		t.Errorf("after a new request, a poll with the old ETag got %d (ETag %q, was %q); want 200, a new ETag and the new request", status, after, before)
	}
}

// The list page's rows carry the time a request started waiting, in UTC,
// as text and as a datetime the page's script turns into an age and the
// viewer's local time: the live part holds nothing that changes by itself
// from one second to the next.
func TestTheListSaysWhenARequestStartedWaitingInUTC(t *testing.T) {
	g := waiting(t, refundCall(refundInput, 1))
	h := newInbox(t, inbox.Memory(g))
	reqs := g.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests: %v", reqs)
	}
	since := reqs[0].Since.UTC()
	body := get(h, "alice", "/live").Body.String()
	want := fmt.Sprintf(`<time datetime="%s" data-age>%s</time>`, since.Format("2006-01-02T15:04:05Z07:00"), since.Format("2006-01-02 15:04:05 UTC"))
	if !strings.Contains(body, want) {
		t.Errorf("the live part does not hold %s:\n%s", want, body)
	}
}
