package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/examples/internal/inboxdemo"
)

// syncBuffer is the demo's output, written by its run's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The demo, decided over HTTP as the page's form does (the browser test in
// browsertest does it in Chromium): approving resumes the run, and the
// upstream applies the refund once.
func TestApprovingInTheInboxResumesTheRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out syncBuffer
	d, err := inboxdemo.Start("127.0.0.1:0", &out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	defer client.CloseIdleConnections()
	get := func(u string) string {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := get(d.URL); !strings.Contains(body, "not signed in") {
		t.Fatalf("the inbox before signing in:\n%s", body)
	}
	get(d.LoginURL)
	select {
	case <-d.Paused():
	case <-d.Done():
		t.Fatalf("the run ended without pausing:\n%s", out.String())
	}
	link := regexp.MustCompile(`href="(request\?id=[^"]+)"`).FindStringSubmatch(get(d.URL))
	if link == nil {
		t.Fatal("the list shows no request")
	}
	page := get(d.URL + strings.ReplaceAll(link[1], "&amp;", "&"))
	id := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(page)
	tok := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(page)
	if id == nil || tok == nil || !strings.Contains(page, "A-1001") {
		t.Fatalf("the request's page:\n%s", page)
	}
	if !strings.Contains(page, "Message for the model") {
		// The demo wraps its store to learn of answers; a wrapper that
		// embedded inbox.Store alone hid Reply, and the page offered no
		// approval with changes and no message for the model.
		t.Errorf("the request's page offers no message for the model with a denial:\n%s", page)
	}
	resp, err := client.PostForm(d.URL+"decide", url.Values{"id": {id[1]}, "token": {tok[1]}, "decision": {"approve"}, "comment": {"charged twice: checked"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	o, err := d.Outcome()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if o.Decision != approval.Approved || o.Applied != 1 || o.Requests != 1 || !strings.Contains(o.Answer, "refunded 25 EUR") {
		t.Fatalf("outcome %+v\n%s", o, out.String())
	}
	if list := get(d.URL); !strings.Contains(list, "charged twice: checked") || !strings.Contains(list, `class="by">on-call<`) {
		t.Errorf("the audit line is not in the list:\n%s", list)
	}
	if status := get(d.URL + "run"); !strings.Contains(status, "finished") || !strings.Contains(status, "refunds applied by the upstream: 1") {
		t.Errorf("the run's page:\n%s", status)
	}
	for _, want := range []string{"paused: refund", "on-call approved it", "refunds applied by the upstream: 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
