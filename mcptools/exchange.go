package mcptools

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
)

// exchange is what the HTTP client of a Streamable HTTP transport made
// with Transport saw of the request that carried one tools/call: whether it
// was written whole, and the status and Retry-After of its answer. The SDK
// wraps every failure of such a request, and the 429, 502, 503 and 504
// answers, as one JSON-RPC error (-32005, "rejected by transport") and
// drops the header; this tells a request that never reached the server
// from one whose answer was lost after it arrived.
type exchange struct {
	mu         sync.Mutex
	posted     bool // a POST carried the call
	wrote      bool // ... and it was written whole
	status     int  // the answer's status; 0 for none
	retryAfter string
	// inputRequired: the server's answer to the latest tools/call of the
	// call (a round of the SDK's multi round-trip is one) was an
	// InputRequiredResult, seen on the wire by Transport, which the SDK
	// then failed to fulfil on its own. It is reset by every tools/call
	// sent: an input request answered says nothing of the next round,
	// where the server may act. A server's own request during a call (a
	// 2025 elicitation or sampling request on the call's stream) is not
	// one: the client answered it, or the server could not send it, and
	// the server may have acted before it asked.
	inputRequired bool
}

// markInputRequired records that the server answered the latest
// tools/call with an InputRequiredResult.
func (e *exchange) markInputRequired() {
	e.mu.Lock()
	e.inputRequired = true
	e.mu.Unlock()
}

// sent records that another tools/call of the call was sent: what the
// server answered the one before says nothing of it.
func (e *exchange) sent() {
	e.mu.Lock()
	e.inputRequired = false
	e.mu.Unlock()
}

// askedForInput reports whether the server answered the latest tools/call
// with an InputRequiredResult.
func (e *exchange) askedForInput() bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inputRequired
}

// exchangeKey is the context key under which send leaves a call's
// exchange for the recorder.
type exchangeKey struct{}

// seen returns what the exchange saw: whether a request was posted,
// written, and the answer's status and Retry-After.
func (e *exchange) seen() (posted, wrote bool, status int, retryAfter string) {
	if e == nil {
		return false, false, 0, ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.posted, e.wrote, e.status, e.retryAfter
}

// recorder is the http.RoundTripper of a client made by recordingClient.
type recorder struct{ next http.RoundTripper }

// recordingClient returns a copy of c (http.DefaultClient when nil) whose
// transport records, for the POST of a tools/call sent by a Tool, what its
// exchange says.
func recordingClient(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	if _, ok := c.Transport.(*recorder); ok {
		return c
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	rc := *c
	rc.Transport = &recorder{next: next}
	return &rc
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil || req.Method != http.MethodPost {
		return r.next.RoundTrip(req)
	}
	ex.mu.Lock()
	ex.posted, ex.wrote, ex.status, ex.retryAfter, ex.inputRequired = true, false, 0, "", false
	ex.mu.Unlock()
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			ex.mu.Lock()
			ex.wrote = true
			ex.mu.Unlock()
		}
	}}
	resp, err := r.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if resp != nil {
		ex.mu.Lock()
		ex.status, ex.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		ex.mu.Unlock()
		if resp.Body != nil {
			resp.Body = &inputScan{ReadCloser: resp.Body, ex: ex}
		}
	}
	return resp, err
}

// inputNeedle is how an InputRequiredResult (2026-07-28) names itself on
// the wire (compact JSON, as the SDKs write it).
var inputNeedle = []byte(`"resultType":"input_required"`)

// inputScan marks its exchange when the body it reads, a JSON answer or
// the call's event stream, holds an InputRequiredResult.
type inputScan struct {
	io.ReadCloser
	ex   *exchange
	tail []byte // the last bytes read, for a needle across reads
	seen bool
}

func (s *inputScan) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if n > 0 && !s.seen {
		buf := append(s.tail, p[:n]...)
		if bytes.Contains(buf, inputNeedle) {
			s.seen = true
			s.ex.markInputRequired()
		}
		keep := min(len(buf), len(inputNeedle)-1)
		s.tail = append(s.tail[:0], buf[len(buf)-keep:]...)
	}
	return n, err
}

// withExchange returns ctx carrying ex for the recorder.
func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}
