package mcptools

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// conn is the session the tools of one List share, and the way to start a
// new one when it is gone (WithReconnect). Safe for concurrent use.
type conn struct {
	reconnect func(context.Context) (*mcp.ClientSession, error)
	lock      chan struct{} // held while a new session is started
	// records: a tools/call on these sessions was recorded by Transport's
	// HTTP client (see exchange), so a call it has no record of was never
	// sent.
	records atomic.Bool

	mu    sync.Mutex
	cur   *mcp.ClientSession
	attrs []attribute.KeyValue // of cur, for every tools/call's span
}

func newConn(s *mcp.ClientSession, reconnect func(context.Context) (*mcp.ClientSession, error)) *conn {
	return &conn{reconnect: reconnect, lock: make(chan struct{}, 1), cur: s, attrs: sessionAttrs(s)}
}

// current returns the session calls go to, and its span attributes.
func (c *conn) current() (*mcp.ClientSession, []attribute.KeyValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.attrs
}

// errNoReconnect is renew's error without WithReconnect.
var errNoReconnect = errors.New("mcptools: the session is gone and no WithReconnect was given")

// renew returns a session in place of stale: the current one, when another
// call replaced stale already, or a new one from reconnect, which then
// replaces stale (closed here). One call at a time starts a session; the
// others wait for it, or for ctx.
func (c *conn) renew(ctx context.Context, stale *mcp.ClientSession) (*mcp.ClientSession, error) {
	if c.reconnect == nil {
		return nil, errNoReconnect
	}
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-c.lock }()
	if cur, _ := c.current(); cur != stale {
		return cur, nil
	}
	fresh, err := c.reconnect(ctx)
	switch {
	case err != nil:
		return nil, err
	case fresh == nil:
		return nil, errors.New("mcptools: WithReconnect's func returned no session and no error")
	}
	c.mu.Lock()
	c.cur, c.attrs = fresh, sessionAttrs(fresh)
	c.mu.Unlock()
	_ = stale.Close()
	return fresh, nil
}

// sessionAttrs are the span attributes of every tools/call on s:
// mcp.session.id only for a session that has one (a stateless server's, or
// one over stdio, has none).
func sessionAttrs(s *mcp.ClientSession) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.McpMethodNameToolsCall}
	if r := s.InitializeResult(); r != nil && r.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(r.ProtocolVersion))
	}
	if id := s.ID(); id != "" {
		attrs = append(attrs, semconv.McpSessionID(id))
	}
	return attrs
}
