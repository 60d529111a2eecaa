package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
)

// Issue 27: a stateless server of the 2026-07-28 protocol (no initialize,
// no session) works beside a 2025 one with a session: the spans carry
// mcp.session.id only for the session that has one, and every call records
// the MCP conventions' mcp.client.operation.duration.
func TestStatelessServersWorkBesideSessions(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	for _, c := range []struct {
		name      string
		stateless bool
		version   string // the client's; "" for the newest
		protocol  string
	}{
		{"stateless, 2026-07-28", true, "", "2026-07-28"},
		{"a session, 2025-11-25", false, "2025-11-25", "2025-11-25"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newHTTPServer(t, billingServer(), &mcp.StreamableHTTPOptions{Stateless: c.stateless})
			session, _ := srv.connect(c.version, nil)
			if got := session.InitializeResult().ProtocolVersion; got != c.protocol {
				t.Fatalf("protocol %s; want %s", got, c.protocol)
			}
			ts, err := mcptools.List(context.Background(), session, trusted, mcptools.WithMeterProvider(mp))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracing(t)
			r := toolsafe.Wrap(toolNamed(t, ts, "lookup"), toolsafe.WithTracing(tr.hook)).Run(context.Background(), `{"city":"Oslo"}`)
			if r.Output != "found" {
				t.Fatalf("%s", r.Observation())
			}
			a := tr.attempts()[0].Attributes()
			id, hasID := attr(a, "mcp.session.id")
			if hasID == c.stateless || !c.stateless && id != session.ID() {
				t.Errorf("mcp.session.id %q (set %v); want it only for a session with an ID (%q)", id, hasID, session.ID())
			}
			if v, _ := attr(a, "mcp.protocol.version"); v != c.protocol {
				t.Errorf("mcp.protocol.version %q; want %s", v, c.protocol)
			}
		})
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.client.operation.duration" || m.Unit != "s" {
				continue
			}
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				method, _ := p.Attributes.Value(attribute.Key("mcp.method.name"))
				version, _ := p.Attributes.Value(attribute.Key("mcp.protocol.version"))
				tool, _ := p.Attributes.Value(attribute.Key("gen_ai.tool.name"))
				counts[method.AsString()+" "+version.AsString()+" "+tool.AsString()] += p.Count
			}
		}
	}
	for _, want := range []string{"tools/call 2026-07-28 lookup", "tools/call 2025-11-25 lookup"} {
		if counts[want] != 1 {
			t.Errorf("mcp.client.operation.duration has %d points for %q; want 1 (all: %v)", counts[want], want, counts)
		}
	}
}

// rawPeer is an MCP server written against the wire, over the SDK's
// in-memory transport, that answers tools/call with result, a raw JSON-RPC
// result, or with rpcErr: what a server of the tasks extension sends and
// go-sdk has no types for.
func rawPeer(t *testing.T, result json.RawMessage, rpcErr *jsonrpc.Error) (*mcp.ClientSession, func() int) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan struct{}, 10)
	go func() {
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			resp := &jsonrpc.Response{ID: req.ID}
			switch req.Method {
			case "initialize":
				resp.Result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"jobs","version":"v1"}}`)
			case "tools/list":
				resp.Result = json.RawMessage(`{"tools":[{"name":"build","inputSchema":{"type":"object"}}]}`)
			case "tools/call":
				calls <- struct{}{}
				resp.Result, resp.Error = result, nil
				if rpcErr != nil {
					resp.Result, resp.Error = nil, rpcErr
				}
			default:
				resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
			}
			if err := conn.Write(context.Background(), resp); err != nil {
				return
			}
		}
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
	session, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = session.Close(); _ = conn.Close() })
	return session, func() int { return len(calls) }
}

// Issue 27: go-sdk cannot follow a task of the MCP tasks extension (it
// decodes no task handle), so mcptools never asks for tasks; a server that
// runs a tool only as a task answers -32021, and one that sends a task
// handle anyway has the call running where nobody follows it. The first
// was not applied, the second may be: neither is sent again, and the model
// is told why.
func TestTasksThisClientCannotFollowAreToldAsSuch(t *testing.T) {
	needsTasks := &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability",
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}
	for _, c := range []struct {
		name    string
		result  json.RawMessage
		rpcErr  *jsonrpc.Error
		saw     string
		unknown bool
		errType string
	}{
		{"a tool that runs only as a task", nil, needsTasks, "runs it only as a background task", false, "-32021"},
		{"a task handle sent anyway", json.RawMessage(`{"resultType":"task","taskId":"786512e2","status":"working","createdAt":"2026-12-02T10:30:00Z","lastUpdatedAt":"2026-12-02T10:30:00Z","ttlMs":60000}`),
			nil, "answered with a background task", true, "task"},
	} {
		t.Run(c.name, func(t *testing.T) {
			session, calls := rawPeer(t, c.result, c.rpcErr)
			ts, err := mcptools.List(context.Background(), session, trusted)
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracing(t)
			r := toolsafe.Wrap(ts[0], toolsafe.WithRetry(fast()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(tr.hook)).Run(context.Background(), `{}`)
			if r.Kind() != middleware.KindFailed || r.Attempts != 1 || calls() != 1 || !strings.Contains(r.Observation(), c.saw) {
				t.Fatalf("kind %q after %d attempts, %d calls: %s; want tool-failed after 1, saying %q", r.Kind(), r.Attempts, calls(), r.Observation(), c.saw)
			}
			if unknown := r.Failure.SideEffect == middleware.SideEffectUnknown; unknown != c.unknown {
				t.Errorf("outcome unknown %v; want %v", unknown, c.unknown)
			}
			if et, _ := attr(tr.attempts()[0].Attributes(), "error.type"); et != c.errType {
				t.Errorf("error.type %q; want %q", et, c.errType)
			}
		})
	}
}
