package mcptools_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
)

// stdioServer starts the test binary as a go-sdk MCP server over stdio in
// mode (see serveStdio), and returns its one tool and a func that counts
// the charges it made (over every process, when WithReconnect starts it
// again: reconnect adds that option).
func stdioServer(t *testing.T, mode string, reconnect bool, opts ...mcptools.Option) (*mcptools.Tool, func() int) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "charges")
	connect := func(ctx context.Context) (*mcp.ClientSession, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), stdioServerEnv+"="+mode, stdioCountEnv+"="+count)
		client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
		session, err := client.Connect(ctx, mcptools.Transport(&mcp.CommandTransport{Command: cmd}), nil)
		if err == nil {
			t.Cleanup(func() { _ = session.Close() })
		}
		return session, err
	}
	session, err := connect(context.Background())
	if err != nil {
		t.Fatalf("starting the stdio server: %v", err)
	}
	if reconnect {
		opts = append(opts, mcptools.WithReconnect(connect))
	}
	ts, err := mcptools.List(context.Background(), session, opts...)
	if err != nil || len(ts) != 1 {
		t.Fatalf("listing: %v, %d tools", err, len(ts))
	}
	return ts[0].(*mcptools.Tool), func() int {
		b, err := os.ReadFile(count)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
}

// Issue 27: a go-sdk server tool with side effects that acts and then fails
// with an internal error (-32603) was retried: the server charged three
// times. An unannotated tool has side effects without a key, and an
// internal error proves nothing was left undone: one attempt, one charge,
// and the model is told it may have been applied.
func TestAnInternalErrorAfterTheToolActedIsNotSentAgain(t *testing.T) {
	tool, charges := stdioServer(t, "internal", false)
	tr := newTracing(t)
	r := toolsafe.Wrap(tool, toolsafe.WithRetry(fast()), toolsafe.WithTimeout(10*time.Second), toolsafe.WithTracing(tr.hook)).Run(context.Background(), `{"city":"Oslo"}`)
	assertUnknownOutcome(t, r, charges(), "its MCP server failed to handle the call")
	if et, _ := attr(tr.attempts()[0].Attributes(), "error.type"); et != "-32603" {
		t.Errorf("error.type %q; want -32603", et)
	}
	if strings.Contains(tr.everything(), "SECRET") || strings.Contains(r.Observation(), "SECRET") {
		t.Error("the server's error text reached the model or a span")
	}
}

// Issue 27: a connection that breaks after the tool acted (the server
// process dies) is an unknown outcome: one attempt, one charge, the model
// told to check. Nothing is sent again on another session.
func TestAConnectionBrokenAfterTheToolActedIsAnUnknownOutcome(t *testing.T) {
	tool, charges := stdioServer(t, "exit", false)
	r := toolsafe.Wrap(tool, toolsafe.WithRetry(fast()), toolsafe.WithTimeout(10*time.Second)).Run(context.Background(), `{"city":"Oslo"}`)
	assertUnknownOutcome(t, r, charges(), "")
}

// An explicit option wins over the annotations: a tool declared
// SideEffectsWithKey by the program is retried after the internal error.
func TestAnExplicitSideEffectsOptionWinsOverTheAnnotations(t *testing.T) {
	tool, charges := stdioServer(t, "internal", false)
	r := toolsafe.Wrap(tool, toolsafe.WithRetry(fast()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey)).Run(context.Background(), `{}`)
	if r.Attempts != 3 || charges() != 3 {
		t.Fatalf("%d attempts, %d charges; want 3 and 3 (the program said a retry is safe)", r.Attempts, charges())
	}
}

// assertUnknownOutcome asserts r ended after one attempt and one charge
// as an outcome that may have been applied, saying reason when not "".
func assertUnknownOutcome(t *testing.T, r middleware.Result, charges int, reason string) {
	t.Helper()
	if r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Attempts != 1 || charges != 1 {
		t.Fatalf("%s after %d attempts and %d charges; want tool-failed after 1 attempt, 1 charge", r.Observation(), r.Attempts, charges)
	}
	if r.Failure.SideEffect != middleware.SideEffectUnknown || r.Failure.Retryable {
		t.Errorf("side effect %v, retryable %v; want unknown, not retryable", r.Failure.SideEffect, r.Failure.Retryable)
	}
	if obs := r.Observation(); !strings.Contains(obs, "may have been applied; check before calling again") || !strings.Contains(obs, reason) {
		t.Errorf("the model saw %q; want it told the charge may have been applied (%s)", obs, reason)
	}
}

// Issue 27: every call after a server's connection broke failed "its MCP
// session is closed ... Do not call again", and nothing reconnected. With
// WithReconnect the charge whose answer was lost is not sent again (its
// outcome is unknown), and the next call starts the server again and is
// sent on the new session: two charges, one per call.
func TestADeadStdioServerIsStartedAgainForTheNextCall(t *testing.T) {
	tool, charges := stdioServer(t, "exit-once", true)
	charge := toolsafe.Wrap(tool, toolsafe.WithRetry(fast()), toolsafe.WithTimeout(10*time.Second))
	assertUnknownOutcome(t, charge.Run(context.Background(), `{"order":"A-1"}`), charges(), "")
	r := charge.Run(context.Background(), `{"order":"A-2"}`)
	if r.Output != "charged" || r.Attempts != 1 || charges() != 2 {
		t.Fatalf("%s after %d attempts, %d charges; want charged after 1 attempt, 2 charges in all", r.Observation(), r.Attempts, charges())
	}
}
