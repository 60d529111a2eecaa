package temporaltools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.uber.org/goleak"
)

// HowToStart says how to give the tests a Temporal dev server.
const howToStart = `temporaltools' tests that need a real Temporal server start a dev server of the
Temporal CLI (temporalio/cli v1.5.1, built from the Go module proxy): name its binary in TEMPORAL_CLI.

    GOBIN=$HOME/.cache/toolsafe go install github.com/temporalio/cli/cmd/temporal@v1.5.1   # about 5 minutes
    TEMPORAL_CLI=$HOME/.cache/toolsafe/temporal go test -race ./...

(bash scripts/e2e-temporal.sh -cli builds it once, caches it, and prints its path; .ci/run does this for you.)`

var dev struct {
	once   sync.Once
	server *testsuite.DevServer
	log    bytes.Buffer
	err    error
}

// devClient returns a client of the test binary's dev server on
// 127.0.0.1, started on first use with the CLI in TEMPORAL_CLI.
func devClient(t *testing.T) client.Client {
	t.Helper()
	dev.once.Do(func() {
		cli := os.Getenv("TEMPORAL_CLI")
		if cli == "" {
			dev.err = errors.New("TEMPORAL_CLI is not set.\n" + howToStart)
			return
		}
		if _, err := os.Stat(cli); err != nil {
			dev.err = fmt.Errorf("TEMPORAL_CLI=%s: %v.\n%s", cli, err, howToStart)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dev.server, dev.err = testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath:  cli,
			ClientOptions: &client.Options{HostPort: "", Logger: quiet},
			LogLevel:      "error",
			Stdout:        &dev.log, Stderr: &dev.log,
		})
	})
	if dev.err != nil {
		t.Fatal(dev.err)
	}
	return dev.server.Client()
}

// quiet is the SDK's logger in the tests: WARN and above, on stderr.
var quiet = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

func TestMain(m *testing.M) {
	// No sticky cache: every workflow task on the dev server replays the
	// workflow's whole history, so every test there runs the workflows'
	// replays, and a query goes to whichever worker polls.
	worker.SetStickyWorkflowCacheSize(0)
	code := m.Run()
	if dev.server != nil {
		dev.server.Client().Close()
		if err := dev.server.Stop(); err != nil && code == 0 {
			fmt.Fprintln(os.Stderr, "stopping the dev server:", err)
			code = 1
		}
		if code != 0 {
			_, _ = io.Copy(os.Stderr, &dev.log)
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}
