package mcptools_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe/mcptools"
)

// secret stands for what an MCP server's errors may hold and the model must
// never see: addresses, credentials, stack traces.
const secret = "SECRET dial tcp 10.0.0.7:5432: password authentication failed for user billing"

// testServer is a real MCP server on the SDK's in-memory transport, with a
// client session connected to it, that counts the requests it receives.
type testServer struct {
	server  *mcp.Server
	session *mcp.ClientSession // the client's
	served  *mcp.ServerSession
	raw     *rawConn // the server's end of the transport, to hang up on

	mu        sync.Mutex
	requests  map[string]int      // by method
	arguments map[string][]string // tools/call arguments, by tool
}

// startServer starts a server with the tools add adds, and connects a
// client to it; both are closed when the test ends.
func startServer(t testing.TB, opts *mcp.ServerOptions, add func(*mcp.Server)) *testServer {
	t.Helper()
	s := &testServer{
		server:    mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v0.0.1"}, opts),
		requests:  map[string]int{},
		arguments: map[string][]string{},
	}
	add(s.server)
	s.server.AddReceivingMiddleware(s.count)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	s.raw = &rawConn{Transport: st}
	served, err := s.server.Connect(ctx, s.raw, nil)
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v0.0.1"}, nil)
	session, err := client.Connect(ctx, mcptools.Transport(ct), nil)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	s.session, s.served = session, served
	t.Cleanup(func() {
		_ = session.Close()
		_ = served.Wait()
	})
	return s
}

// rawConn keeps the connection of the transport it wraps, to close it as a
// server process that dies closes its pipes.
type rawConn struct {
	mcp.Transport
	conn atomic.Pointer[mcp.Connection]
}

func (r *rawConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err == nil {
		r.conn.Store(&c)
	}
	return c, err
}

// hangUp closes the server's end of the transport under the server, as if
// its process died.
func (s *testServer) hangUp() {
	if c := s.raw.conn.Load(); c != nil {
		_ = (*c).Close()
	}
}

func (s *testServer) count(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s.mu.Lock()
		s.requests[method]++
		if r, ok := req.(*mcp.CallToolRequest); ok {
			s.arguments[r.Params.Name] = append(s.arguments[r.Params.Name], string(r.Params.Arguments))
		}
		s.mu.Unlock()
		return next(ctx, method, req)
	}
}

// calls returns the number of tools/call requests the server received.
func (s *testServer) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests["tools/call"]
}

func (s *testServer) lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests["tools/list"]
}

// args returns the arguments of each tools/call of tool, in order.
func (s *testServer) args(tool string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.arguments[tool]...)
}

// objectSchema is an input schema for raw tools.
var objectSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)

// rawTool adds a tool whose handler is h, with objectSchema as its input
// schema, annotated read-only (the tests that list it trust it, so it is
// retried as a read; see sideEffectTool for one that acts).
func rawTool(s *mcp.Server, name string, h mcp.ToolHandler) {
	s.AddTool(&mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: objectSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, h)
}

// trusted is the option of the tests whose server's read-only hints
// loosen the side-effect guard.
var trusted = mcptools.WithTrusted(true)

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
