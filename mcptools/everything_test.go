package mcptools_test

import (
	"context"
	"encoding/json"
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

// everythingServer is where scripts/mcp-everything.sh installs
// @modelcontextprotocol/server-everything (the version pinned in
// testdata/everything/package.json), a TypeScript-SDK server.
var everythingServer = filepath.Join("testdata", "everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")

// connectEverything starts server-everything over stdio under Node and
// connects to it; the session is closed when the test ends.
func connectEverything(t *testing.T) *mcp.ClientSession {
	t.Helper()
	if _, err := os.Stat(everythingServer); err != nil {
		t.Fatalf("server-everything is not installed (%v): run bash scripts/mcp-everything.sh, as .ci/run does", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (%v): apt-get install -y nodejs npm, as .ci/run does", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
	transport := mcptools.Transport(&mcp.CommandTransport{Command: exec.Command(node, everythingServer, "stdio")})
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connecting to server-everything: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// A TypeScript-SDK server answers an unknown tool and input its schema
// rejects with isError results ("MCP error -32602: ..."), not JSON-RPC
// errors: mcptools maps them as it maps -32602, to a tool no longer offered
// and to args-invalid, and the SDK's text reaches neither the model nor a
// span.
func TestTypeScriptServerErrors(t *testing.T) {
	session := connectEverything(t)
	listed, err := mcptools.List(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	var echo *mcptools.Tool
	for _, lt := range listed {
		if lt.Name() == "echo" {
			echo = lt.(*mcptools.Tool)
		}
	}
	if echo == nil {
		t.Fatal("server-everything lists no echo tool")
	}
	// Tools made from definitions the server did not list, or with a
	// schema that takes anything, so that the server is the one to refuse.
	anyObject := json.RawMessage(`{"type":"object"}`)
	withdrawn, err := mcptools.New(session, &mcp.Tool{Name: "withdrawn-tool", InputSchema: anyObject})
	if err != nil {
		t.Fatal(err)
	}
	lax, err := mcptools.New(session, &mcp.Tool{Name: "echo", InputSchema: anyObject})
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracing(t)
	cases := []struct {
		name  string
		tool  *mcptools.Tool
		input string
		kind  middleware.Kind
		saw   string
	}{
		{"a call that works", echo, `{"message":"hi"}`, "", "Echo: hi"},
		{"an unknown tool is withdrawn", withdrawn, `{}`, middleware.KindToolError, "withdrawn-tool is no longer offered by its MCP server"},
		{"input the server rejects is args-invalid", lax, `{"message":5}`, middleware.KindArgsInvalid, "rejected the arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr.spans.Reset()
			r := toolsafe.Wrap(c.tool, toolsafe.WithRetry(fast()), toolsafe.WithTracing(tr.hook)).Run(context.Background(), c.input)
			if r.Kind() != c.kind || r.Attempts != 1 || !strings.Contains(r.Observation(), c.saw) {
				t.Fatalf("kind %q after %d attempts, the model saw %q; want %q after 1 attempt, saying %q", r.Kind(), r.Attempts, r.Observation(), c.kind, c.saw)
			}
			if strings.Contains(r.Observation(), "MCP error") || strings.Contains(tr.everything(), "MCP error") {
				t.Errorf("the SDK's text reached the model or a span:\n%s\n%s", r.Observation(), tr.everything())
			}
			if c.kind == "" {
				return
			}
			if et, _ := attr(tr.attempts()[0].Attributes(), "error.type"); et != "tool_error" {
				t.Errorf("the attempt's error.type is %q; want tool_error (an isError result)", et)
			}
		})
	}
}
