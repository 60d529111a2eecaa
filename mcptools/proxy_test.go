package mcptools_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe/mcptools"
)

// fault is what the proxy does to one tools/call request.
type fault int

const (
	pass      fault = iota
	answer503       // answers 503 with Retry-After: 1, without forwarding
	answer429       // answers 429 with Retry-After: 1, without forwarding
	answer502       // forwards, then answers 502: the server acted
	dropAfter       // forwards, then drops the connection without an answer
	cutStream       // forwards, then sends the answer's headers and cuts its body
	forget          // forgets every session first (a restarted server), then forwards
	cutMid          // forwards, then sends the answer's headers and half its body, and cuts it
)

// httpServer is a go-sdk MCP server over Streamable HTTP on 127.0.0.1
// behind a reverse proxy of its own on 127.0.0.1 that does to each
// tools/call what its faults say, in order. It counts the tools/call
// requests that reached the proxy and those that reached the server.
type httpServer struct {
	t        *testing.T
	server   *mcp.Server
	opts     *mcp.StreamableHTTPOptions
	upstream *httptest.Server
	handler  atomic.Pointer[http.Handler] // the server's sessions; replaced to forget them

	addr     string
	mu       sync.Mutex
	proxy    *http.Server
	faults   []fault
	wait     string // the Retry-After of answer503 and answer429; "" for "1"
	arrived  int    // tools/call requests at the proxy
	received atomic.Int32
}

// newHTTPServer serves server with opts behind the proxy; both stop when
// the test ends.
func newHTTPServer(t *testing.T, server *mcp.Server, opts *mcp.StreamableHTTPOptions) *httpServer {
	t.Helper()
	s := &httpServer{t: t, server: server, opts: opts}
	t.Cleanup(func() {
		// Last: the sessions of handlers that forgot them live on.
		for ss := range server.Sessions() {
			_ = ss.Close()
		}
	})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				s.received.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	s.forgetSessions()
	s.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*s.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(s.upstream.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.proxy != nil {
			_ = s.proxy.Close()
		}
	})
	return s
}

// forgetSessions gives the server a new handler, which knows none of the
// sessions the old one started: as a restarted server, it answers 404 to
// their IDs.
func (s *httpServer) forgetSessions() {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server }, s.opts)
	s.handler.Store(&h)
}

func (s *httpServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.serveProxy)}
	s.proxy = srv
	go func() { _ = srv.Serve(ln) }()
}

// stop closes the proxy and its connections: new ones are refused.
func (s *httpServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy != nil {
		_ = s.proxy.Close()
		s.proxy = nil
	}
}

// start listens again on the proxy's address.
func (s *httpServer) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxy != nil {
		return
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Errorf("listening again on %s: %v", s.addr, err)
		return
	}
	s.serve(ln)
}

// URL is the proxy's endpoint.
func (s *httpServer) URL() string { return "http://" + s.addr }

// inject makes the proxy do fs to the next tools/call requests, in order.
func (s *httpServer) inject(fs ...fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fs...)
}

// counts returns the tools/call requests that reached the proxy and the
// server.
func (s *httpServer) counts() (proxy, server int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrived, int(s.received.Load())
}

// isCall reports whether body is a JSON-RPC tools/call request.
func isCall(body []byte) bool {
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call"
}

func (s *httpServer) serveProxy(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	f := pass
	if r.Method == http.MethodPost && isCall(body) {
		s.mu.Lock()
		s.arrived++
		if len(s.faults) > 0 {
			f, s.faults = s.faults[0], s.faults[1:]
		}
		s.mu.Unlock()
	}
	switch f {
	case answer503, answer429:
		s.mu.Lock()
		wait := cmp.Or(s.wait, "1")
		s.mu.Unlock()
		w.Header().Set("Retry-After", wait)
		code := http.StatusServiceUnavailable
		if f == answer429 {
			code = http.StatusTooManyRequests
		}
		http.Error(w, "SECRET upstream overloaded", code)
		return
	case forget:
		s.forgetSessions()
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, s.upstream.URL+r.URL.Path, bytes.NewReader(body))
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	out.Header = r.Header.Clone()
	resp, err := s.upstream.Client().Do(out)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer resp.Body.Close()
	if f == pass || f == forget {
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		flushCopy(w, resp.Body)
		return
	}
	answer, _ := io.ReadAll(resp.Body) // the server has acted
	switch f {
	case answer502:
		http.Error(w, "SECRET bad gateway", http.StatusBadGateway)
	case dropAfter:
		panic(http.ErrAbortHandler) // the connection closes without an answer
	case cutStream:
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the body is cut
	case cutMid:
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer[:len(answer)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the rest of the result is cut
	}
}

// flushCopy copies an answer through, flushing each write, as a proxy of
// event streams must.
func flushCopy(w http.ResponseWriter, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// connect connects a client to the proxy through mcptools.Transport, at
// protocol version (latest when ""), with hc as its HTTP client (nil for
// the default), and returns the session and a WithReconnect option for
// it; sessions are closed when the test ends.
func (s *httpServer) connect(version string, hc *http.Client) (*mcp.ClientSession, mcptools.Option) {
	s.t.Helper()
	dial := func(ctx context.Context) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, nil)
		transport := mcptools.Transport(&mcp.StreamableClientTransport{Endpoint: s.URL(), HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1})
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		session, err := client.Connect(ctx, transport, opts)
		if err == nil {
			s.t.Cleanup(func() { _ = session.Close() })
		}
		return session, err
	}
	session, err := dial(context.Background())
	if err != nil {
		s.t.Fatalf("connecting through the proxy: %v", err)
	}
	return session, mcptools.WithReconnect(dial)
}
