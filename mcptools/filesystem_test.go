package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// filesystemServer is where scripts/mcp-everything.sh installs
// @modelcontextprotocol/server-filesystem (pinned in
// testdata/everything/package.json), a TypeScript-SDK server whose tools
// are annotated.
var filesystemServer = filepath.Join("testdata", "everything", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")

// connectFilesystem starts server-filesystem over stdio under Node, serving
// root, and lists its tools with opts. Closing the session waits for the
// server to exit, once its work in flight is done.
func connectFilesystem(t *testing.T, root string, opts ...mcptools.Option) ([]tools.Tool, *mcp.ClientSession) {
	t.Helper()
	if _, err := os.Stat(filesystemServer); err != nil {
		t.Fatalf("server-filesystem is not installed (%v): run bash scripts/mcp-everything.sh, as .ci/run does", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (%v): apt-get install -y nodejs npm, as .ci/run does", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
	session, err := client.Connect(ctx, mcptools.Transport(&mcp.CommandTransport{Command: exec.Command(node, filesystemServer, root)}), nil)
	if err != nil {
		t.Fatalf("connecting to server-filesystem: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	ts, err := mcptools.List(ctx, session, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ts, session
}

// Issue 27: server-filesystem's write, edit and move tools come out as side
// effects without a key whoever trusts it (write_file is idempotent, so
// with a key when trusted: a repeat writes the same bytes); its read tools
// are reads only when the program trusts the server.
func TestServerFilesystemAnnotationsDecideSideEffects(t *testing.T) {
	root := t.TempDir()
	for _, trust := range []bool{false, true} {
		ts, _ := connectFilesystem(t, root, mcptools.WithTrusted(trust))
		for name, want := range map[string]middleware.SideEffects{
			"edit_file":      middleware.SideEffectsWithoutKey,
			"move_file":      middleware.SideEffectsWithoutKey,
			"write_file":     map[bool]middleware.SideEffects{false: middleware.SideEffectsWithoutKey, true: middleware.SideEffectsWithKey}[trust],
			"read_text_file": map[bool]middleware.SideEffects{false: middleware.SideEffectsWithoutKey, true: middleware.NoSideEffects}[trust],
			"list_directory": map[bool]middleware.SideEffects{false: middleware.SideEffectsWithoutKey, true: middleware.NoSideEffects}[trust],
		} {
			got, from := toolNamed(t, ts, name).Hints().SideEffects()
			if got != want {
				t.Errorf("trusted %v: %s has side effects %v (%s); want %v", trust, name, got, from, want)
			}
		}
		if candidate, _ := toolNamed(t, ts, "edit_file").Hints().ApprovalCandidate(); !candidate {
			t.Errorf("trusted %v: edit_file, destructive, is no candidate for approval", trust)
		}
	}
}

// Issue 27: server-filesystem's edit_file, destructive and not idempotent,
// was attempted 4 times under a 1ms attempt timeout, and the edit landed 4
// times ("x" became "xxxxx"). Now the attempt the timeout cut may have been
// applied: it is not sent again, the edit lands at most once, and the model
// is told to check.
func TestEditFileUnderAShortTimeoutLandsAtMostOnce(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, session := connectFilesystem(t, root)
	edit := toolsafe.Wrap(toolNamed(t, ts, "edit_file"),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(time.Millisecond)}), toolsafe.WithTimeout(time.Millisecond))
	input, _ := json.Marshal(map[string]any{"path": file, "edits": []map[string]string{{"oldText": "x", "newText": "xx"}}})
	r := edit.Run(context.Background(), string(input))
	if r.Attempts != 1 || r.Failure == nil || r.Failure.SideEffect != middleware.SideEffectUnknown {
		t.Fatalf("%d attempts: %s; want 1, an outcome that may have been applied", r.Attempts, r.Observation())
	}
	// The server may still be editing when the attempt is cut: closing the
	// session waits for it to exit, which it does once its work is done.
	_ = session.Close()
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got); s != "x" && s != "xx" {
		t.Errorf("the file holds %q; want the edit applied at most once (x or xx)", s)
	}
}
