package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// spanKey is the context key under which send leaves the attempt span of a
// tools/call, for the connection of Transport to record the request's ID on.
type spanKey struct{}

// traceMeta is the params._meta of a tools/call sent with ctx: the trace
// context of ctx's span, injected by p (the global propagator when nil) as
// the MCP conventions and SEP-414 say, unprefixed ("traceparent",
// "tracestate", "baggage"); nil when there is nothing to propagate.
func traceMeta(ctx context.Context, p propagation.TextMapPropagator) mcp.Meta {
	if p == nil {
		p = otel.GetTextMapPropagator()
	}
	carrier := propagation.MapCarrier{}
	p.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	meta := make(mcp.Meta, len(carrier))
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}

// Transport returns t made ready for the tools of mcptools. Connect
// through it: client.Connect(ctx, mcptools.Transport(t), nil).
//
// A *mcp.StreamableClientTransport comes back as a copy whose HTTP client
// (its HTTPClient, or http.DefaultClient) records, for the request that
// carries each tools/call, whether it was written and the status and
// Retry-After of its answer. The SDK reports every failure of such a
// request, and the 429, 502, 503 and 504 answers, as one error and drops
// the header; with the record a Tool tells a request that never reached the
// server (sent again, even for a tool with side effects) from one whose
// answer was lost after it arrived (an outcome that is unknown), and
// honours Retry-After. Without it those failures are told as unknown
// outcomes. Its connection learns of its session through a hook of the
// SDK's that a wrapper would hide, so its spans go without
// jsonrpc.request.id.
//
// Any other transport is wrapped so that the JSON-RPC ID of each tools/call
// a Tool sends is recorded on that call's attempt span as jsonrpc.request.id
// (semconv v1.41.0, as the MCP conventions ask of a client span).
// Transport(nil) is nil. Safe for concurrent use.
func Transport(t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case nil:
		return nil
	case *mcp.StreamableClientTransport:
		if t == nil {
			return t
		}
		c := *t
		c.HTTPClient = recordingClient(t.HTTPClient)
		return &c
	}
	return &idTransport{t}
}

type idTransport struct{ mcp.Transport }

// inputRequired is the resultType of an InputRequiredResult.
var inputRequired = []byte(`"input_required"`)

func (t *idTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &idConn{Connection: c}, nil
}

// idConn records the ID of each call it writes on the span send left in
// the call's context, and, for each tools/call a Tool sends, whether the
// server answered with an InputRequiredResult (see exchange).
type idConn struct {
	mcp.Connection
	mu    sync.Mutex
	calls map[any]*exchange // by request ID, until answered
}

func (c *idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if span, ok := ctx.Value(spanKey{}).(trace.Span); ok {
			span.SetAttributes(semconv.JSONRPCRequestID(fmt.Sprint(req.ID.Raw())))
		}
		if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok && req.Method == "tools/call" {
			c.mu.Lock()
			if c.calls == nil {
				c.calls = map[any]*exchange{}
			}
			c.calls[req.ID.Raw()] = ex
			c.mu.Unlock()
			ex.sent()
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		ex := c.calls[resp.ID.Raw()]
		delete(c.calls, resp.ID.Raw())
		c.mu.Unlock()
		// Decoded only when it may be one: most results are not.
		if ex != nil && resp.Error == nil && bytes.Contains(resp.Result, inputRequired) {
			var r struct {
				ResultType string `json:"resultType"`
			}
			if json.Unmarshal(resp.Result, &r) == nil && r.ResultType == "input_required" {
				ex.markInputRequired()
			}
		}
	}
	return msg, err
}
