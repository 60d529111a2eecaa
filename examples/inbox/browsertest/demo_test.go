package browsertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/toolsafe/toolsafe/examples/internal/inboxdemo"
)

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

// The demo in Chromium: sign in, see the pending refund, approve it with a
// comment, see the audit line and the run finish, the refund applied once.
func TestApproveTheDemosRefundInChromium(t *testing.T) {
	var out syncBuffer
	d, err := inboxdemo.Start("127.0.0.1:0", &out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	select {
	case <-d.Paused():
	case <-d.Done():
		t.Fatalf("the run ended without pausing:\n%s", out.String())
	}
	ctx := tab(t, nil)
	run(t, ctx, chromedp.Navigate(d.LoginURL))
	contains(t, "the pending row's tool", text(t, ctx, "tr.request td.tool"), "refund")
	contains(t, "the pending row's input", text(t, ctx, "tr.request pre.input"), `"order": "A-1001"`, `"amount_eur": 25`)
	contains(t, "the pending row's reason", text(t, ctx, "tr.request td.reason"), "no approval has been granted")
	contains(t, "the pending row's run", text(t, ctx, "tr.request td.run"), inboxdemo.RunID)
	contains(t, "the signed-in user", text(t, ctx, "header .user"), inboxdemo.User)
	saveScreenshot(t, value(t, ctx, chromedp.FullScreenshot(100)))

	run(t, ctx, chromedp.Click("a.review", chromedp.NodeVisible), chromedp.WaitVisible("#approve"))
	contains(t, "the request's input", text(t, ctx, "#input"), `"order": "A-1001"`)
	run(t, ctx,
		chromedp.SendKeys("#comment", "charged twice: checked the statement"),
		chromedp.Click("#approve", chromedp.NodeVisible),
	)
	contains(t, "the notice", text(t, ctx, "#notice"), "Approved.")
	contains(t, "the audit line", text(t, ctx, "tr.record.approved"), inboxdemo.User, "approved", "refund", "charged twice: checked the statement", inboxdemo.RunID)

	<-d.Done()
	o, err := d.Outcome()
	if err != nil || o.Applied != 1 || o.Requests != 1 {
		t.Fatalf("outcome %+v, %v\n%s", o, err, out.String())
	}
	run(t, ctx, chromedp.Navigate(d.URL+"run"))
	contains(t, "the run's state", text(t, ctx, "#state"), "finished")
	contains(t, "the run's answer", text(t, ctx, "#answer"), "refunded 25 EUR")
	contains(t, "the upstream's count", text(t, ctx, "#applied"), "refunds applied by the upstream: 1")
}

// saveScreenshot checks png and writes it where -screenshot says.
func saveScreenshot(t *testing.T, png []byte) {
	t.Helper()
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	path := filepath.Join(t.TempDir(), "inbox.png")
	if *screenshot != "" {
		path = *screenshot
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
