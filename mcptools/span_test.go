package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
)

// Over streamable HTTP on 127.0.0.1 the session has an ID: each attempt's
// span carries it beside the method and the protocol version, and the call
// span keeps its GenAI attributes.
func TestSpansCarryTheMCPAttributes(t *testing.T) {
	var n atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
	rawTool(server, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if n.Add(1) == 1 {
			return nil, wireError(jsonrpc.CodeInternalError)
		}
		return text("sunny"), nil
	})
	httpServer := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(httpServer.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: httpServer.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close() })
	if session.ID() == "" {
		t.Fatal("the streamable session has no ID")
	}

	ts, err := mcptools.List(context.Background(), session, trusted)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracing(t)
	tool := toolsafe.Wrap(ts[0], toolsafe.WithRetry(fast()), toolsafe.WithTimeout(5*time.Second), toolsafe.WithTracing(tr.hook))
	if r := tool.Run(context.Background(), `{"city":"Oslo"}`); r.Output != "sunny" || r.Attempts != 2 {
		t.Fatalf("%+v", r)
	}

	attempts := tr.attempts()
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans", len(attempts))
	}
	want := map[string]string{
		"mcp.method.name":      "tools/call",
		"mcp.session.id":       session.ID(),
		"mcp.protocol.version": session.InitializeResult().ProtocolVersion,
	}
	for i, s := range attempts {
		for k, v := range want {
			if got, _ := attr(s.Attributes(), k); got != v || v == "" {
				t.Errorf("attempt %d: %s = %q; want %q", i+1, k, got, v)
			}
		}
		if s.SpanKind() != trace.SpanKindInternal && s.SpanKind() != trace.SpanKindClient {
			t.Errorf("attempt %d is a %v span", i+1, s.SpanKind())
		}
	}
	if code, _ := attr(attempts[0].Attributes(), "rpc.response.status_code"); code != "-32603" {
		t.Errorf("the failed attempt's rpc.response.status_code is %q; want -32603", code)
	}
	if _, ok := attr(attempts[1].Attributes(), "rpc.response.status_code"); ok {
		t.Error("the successful attempt has an rpc.response.status_code")
	}
	var call bool
	for _, s := range tr.spans.Ended() {
		if s.Name() != "execute_tool forecast" {
			continue
		}
		call = true
		if name, _ := attr(s.Attributes(), "gen_ai.tool.name"); name != "forecast" {
			t.Errorf("the call span's gen_ai.tool.name is %q", name)
		}
		if op, _ := attr(s.Attributes(), "gen_ai.operation.name"); op != "execute_tool" {
			t.Errorf("the call span's gen_ai.operation.name is %q", op)
		}
		if attempts[0].Parent().SpanID() != s.SpanContext().SpanID() {
			t.Error("the attempt spans are not children of the call span")
		}
	}
	if !call {
		t.Error("no call span")
	}
	if strings.Contains(tr.everything(), "SECRET") {
		t.Errorf("the server's error text reached a span:\n%s", tr.everything())
	}
}

// WithSpanAttributes(false) leaves the span in ctx alone: a caller's span
// when the tool is used without toolsafe's tracing.
func TestSpanAttributesCanBeTurnedOff(t *testing.T) {
	s := startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("sunny"), nil })
	})
	for _, on := range []bool{true, false} {
		tr := newTracing(t)
		tool := only(t, s, mcptools.WithSpanAttributes(on))
		ctx, span := tr.tp.Tracer("agent").Start(context.Background(), "invoke_agent")
		if _, err := tool.Call(ctx, `{"city":"Oslo"}`); err != nil {
			t.Fatal(err)
		}
		span.End()
		ended := tr.spans.Ended()
		_, set := attr(ended[len(ended)-1].Attributes(), "mcp.method.name")
		if set != on {
			t.Errorf("WithSpanAttributes(%v): the caller's span has mcp.method.name: %v", on, set)
		}
	}
}
