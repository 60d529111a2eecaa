package browsertest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

var screenshot = flag.String("screenshot", "", "also write the inbox's screenshot to this file (the README's is ../inbox.png)")

// browser is the one Chromium of the tests; each test opens tabs in it.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// chromium returns Chromium's path: the one FACTS say Debian installs.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is not installed: apt-get update && apt-get install -y --no-install-recommends chromium fonts-dejavu-core (scripts/e2e-browser.sh does it)")
	return ""
}

// tab opens a tab in the tests' Chromium, closed when t ends, with
// headers sent on every request it makes.
func tab(t *testing.T, headers map[string]any) context.Context {
	t.Helper()
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolsafe-inbox-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromium(t)),
			chromedp.NoSandbox, // root in a container
			chromedp.Flag("headless", "new"),
			chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.NoFirstRun,
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 800),
		)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(alloc)
		browser.ctx = ctx
		browser.cancel = func() { cancel(); cancelAlloc(); os.RemoveAll(dir) }
		browser.err = chromedp.Do(ctx) // starts the browser
	})
	if browser.err != nil {
		t.Fatalf("starting Chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	// A bound on a stuck browser, not a measure of speed.
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	if headers != nil {
		run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers(headers)})
			return err
		}))
	}
	return ctx
}

// run runs steps in ctx and fails t on an error.
func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// value runs a in ctx and returns its value, failing t on an error.
func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// text returns the text of the first element matching sel, once visible.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	run(t, ctx, chromedp.WaitVisible(sel))
	return value(t, ctx, chromedp.Text(sel, chromedp.NodeVisible))
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q: %q", what, w, got)
		}
	}
}
