package mcptools_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
)

// Each attempt span of an MCP tool carries what the MCP conventions ask of
// a client span: the JSON-RPC request's ID (through mcptools.Transport) and
// error.type "tool_error" for a result with isError, or the JSON-RPC code;
// toolsafe's Kind stays beside it, as toolsafe.kind.
func TestAttemptSpansFollowTheMCPConventions(t *testing.T) {
	s := startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "lookup", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if strings.Contains(string(req.Params.Arguments), "Rome") {
				return nil, wireError(jsonrpc.CodeInternalError)
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such city"}}}, nil
		})
	})
	tr := newTracing(t)
	tool := toolsafe.Wrap(only(t, s), toolsafe.WithTracing(tr.hook))
	for _, c := range []struct{ input, errType, kind string }{
		{`{"city":"Oslo"}`, "tool_error", "tool-error"},
		{`{"city":"Rome"}`, "-32603", "tool-failed"},
	} {
		tr.spans.Reset()
		tool.Run(context.Background(), c.input)
		attempts := tr.attempts()
		if len(attempts) != 1 {
			t.Fatalf("%s: %d attempt spans; want 1", c.input, len(attempts))
		}
		a := attempts[0].Attributes()
		for key, want := range map[string]string{"error.type": c.errType, "toolsafe.kind": c.kind, "mcp.method.name": "tools/call"} {
			if got, _ := attr(a, key); got != want {
				t.Errorf("%s: %s = %q; want %q", c.input, key, got, want)
			}
		}
		id, _ := attr(a, "jsonrpc.request.id")
		if n, err := strconv.Atoi(id); err != nil || n < 1 {
			t.Errorf("%s: jsonrpc.request.id = %q; want the request's ID", c.input, id)
		}
	}
}

// Regression (guarantees issue, item 13): an isError result's text went
// into the attempt span's toolsafe.reason as it was (an ENOENT path that
// quotes the arguments), while args-invalid details were withheld because
// they quote the arguments. The model sees the text, as isError results are
// its to read; spans get the kind and the text's size; DEBUG logs the text.
func TestMCPErrorTextStaysOutOfSpans(t *testing.T) {
	const enoent = "ENOENT: no such file or directory, open '/home/alice/tax-2026.pdf'"
	s := startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "read_file", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: enoent}}}, nil
		})
	})
	tr := newTracing(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	tool := toolsafe.Wrap(only(t, s), toolsafe.WithTracing(tr.hook), toolsafe.WithLogger(log))

	r := tool.Run(context.Background(), `{"city":"/home/alice/tax-2026.pdf"}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindToolError || r.Observation() != enoent {
		t.Fatalf("%+v; want a tool-error whose observation is the server's text", r)
	}
	if strings.Contains(tr.everything(), "alice") {
		t.Errorf("the server's text reached a span:\n%s", tr.everything())
	}
	reason, _ := attr(tr.attempts()[0].Attributes(), "toolsafe.reason")
	if want := strconv.Itoa(len(enoent)) + " bytes"; !strings.Contains(reason, want) {
		t.Errorf("toolsafe.reason = %q; want the text's size (%s)", reason, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "alice") && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("the server's text reached a line above DEBUG: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "ENOENT") {
		t.Errorf("no DEBUG line has the server's text:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The trace context of each attempt goes into params._meta, so a go-sdk
// server on 127.0.0.1, over streamable HTTP, whose handler reads it sees
// the agent's trace ID and the attempt span as its parent.
func TestTraceContextReachesAGoSDKServer(t *testing.T) {
	tc := propagation.TraceContext{}
	var mu sync.Mutex
	var seen []trace.SpanContext
	server := mcp.NewServer(&mcp.Implementation{Name: "traced", Version: "v1"}, nil)
	rawTool(server, "forecast", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		carrier := propagation.MapCarrier{}
		for k, v := range req.Params.Meta {
			if s, ok := v.(string); ok {
				carrier[k] = s
			}
		}
		sc := trace.SpanContextFromContext(tc.Extract(ctx, carrier))
		mu.Lock()
		seen = append(seen, sc)
		mu.Unlock()
		return text("sunny"), nil
	})
	httpServer := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(httpServer.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
	transport := mcptools.Transport(&mcp.StreamableClientTransport{Endpoint: httpServer.URL, DisableStandaloneSSE: true})
	session, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close() })
	ts, err := mcptools.List(context.Background(), session, mcptools.WithPropagator(tc))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracing(t)
	tool := toolsafe.Wrap(ts[0], toolsafe.WithTracing(tr.hook))
	agent, span := tr.tp.Tracer("agent").Start(context.Background(), "invoke_agent weather")
	r := tool.Run(agent, `{"city":"Oslo"}`)
	span.End()
	if r.Output != "sunny" {
		t.Fatalf("%+v", r)
	}
	attempts := tr.attempts()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || len(attempts) != 1 {
		t.Fatalf("the server saw %d calls, %d attempt spans; want 1 each", len(seen), len(attempts))
	}
	if !seen[0].IsRemote() || seen[0].TraceID() != span.SpanContext().TraceID() {
		t.Errorf("the server's handler saw trace %s; want the agent's %s", seen[0].TraceID(), span.SpanContext().TraceID())
	}
	if seen[0].SpanID() != attempts[0].SpanContext().SpanID() {
		t.Errorf("the server's parent is span %s; want the attempt span %s", seen[0].SpanID(), attempts[0].SpanContext().SpanID())
	}
}
