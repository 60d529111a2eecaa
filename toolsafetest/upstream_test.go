package toolsafetest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// watchdog bounds every wait of these tests; it is never slept on.
const watchdog = 5 * time.Second

// recv receives from ch, failing the test if nothing arrives in time.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(watchdog):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// recorder observes a server through its test hooks.
type recorder struct {
	mu       sync.Mutex
	steps    []Step
	waiting  chan string // paths of requests parked in Hang or Slow
	finished chan string // paths of requests whose step returned
}

// startRec starts a server with hooks; the server is closed at cleanup.
func startRec(t *testing.T, h http.Handler) (*Upstream, *recorder) {
	t.Helper()
	rec := &recorder{waiting: make(chan string, 1024), finished: make(chan string, 1024)}
	s := newUpstream(h, hooks{
		decided: func(_ string, st Step) {
			rec.mu.Lock()
			rec.steps = append(rec.steps, st)
			rec.mu.Unlock()
		},
		waiting:  func(p string, _ Step) { rec.waiting <- p },
		finished: func(p string) { rec.finished <- p },
	})
	t.Cleanup(s.Close)
	return s, rec
}

// reuseClient returns a client with at most one connection to the server,
// so that sequential requests are guaranteed to reuse it.
func reuseClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// result is what a client saw.
type result struct {
	code       int
	retryAfter []string
	body       string
	err        error
}

func do(c *http.Client, req *http.Request) result {
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{code: resp.StatusCode, retryAfter: resp.Header.Values("Retry-After"), body: string(b), err: err}
}

func newReq(t *testing.T, ctx context.Context, method, url, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func get(t *testing.T, c *http.Client, url string) result {
	t.Helper()
	return do(c, newReq(t, context.Background(), http.MethodGet, url, ""))
}

// async runs a request in the background.
func async(c *http.Client, req *http.Request) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- do(c, req) }()
	return ch
}

// counting returns a handler that counts its calls, records request bodies
// and answers 200 "ok".
func counting() (http.Handler, *atomic.Int32, *bodies) {
	var n atomic.Int32
	bs := &bodies{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, _ := io.ReadAll(r.Body)
		bs.add(string(b))
		_, _ = io.WriteString(w, "ok")
	}), &n, bs
}

type bodies struct {
	mu sync.Mutex
	bs []string
}

func (b *bodies) add(s string) { b.mu.Lock(); b.bs = append(b.bs, s); b.mu.Unlock() }
func (b *bodies) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.bs)
}

func TestStatusSteps(t *testing.T) {
	const date = "Wed, 21 Oct 2015 07:28:00 GMT"
	tests := []struct {
		name       string
		step       Step
		code       int
		retryAfter []string // nil: no header
		body       string
	}{
		{"Pass", Pass(), 200, nil, "ok"},
		{"zero step passes", Step{}, 200, nil, "ok"},
		{"Respond", Respond(418, "short and stout"), 418, nil, "short and stout"},
		{"Respond zero code is 500", Respond(0, "boom"), 500, nil, "boom"},
		{"TooMany seconds", TooMany("2"), 429, []string{"2"}, "toolsafetest: too many requests\n"},
		{"TooMany HTTP-date verbatim", TooMany(date), 429, []string{date}, "toolsafetest: too many requests\n"},
		{"TooMany without header", TooMany(""), 429, nil, "toolsafetest: too many requests\n"},
		{"Unavailable without header", Unavailable(""), 503, nil, "toolsafetest: service unavailable\n"},
		{"Unavailable seconds", Unavailable("120"), 503, []string{"120"}, "toolsafetest: service unavailable\n"},
		{"Respond with Retry-After", Respond(502, "bad gateway").WithRetryAfter("0"), 502, []string{"0"}, "bad gateway"},
		{"WithRetryAfter replaces TooMany's header", TooMany("2").WithRetryAfter("7"), 429, []string{"7"}, "toolsafetest: too many requests\n"},
		{"WithRetryAfter empty drops the header", Unavailable("2").WithRetryAfter(""), 503, nil, "toolsafetest: service unavailable\n"},
		{"WithRetryAfter on Pass is ignored", Pass().WithRetryAfter("5"), 200, nil, "ok"},
	}
	s := NewUpstream(nil)
	defer s.Close()
	c := NoKeepAliveClient()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Enqueue("/s", tt.step)
			got := get(t, c, s.URL()+"/s")
			if got.err != nil {
				t.Fatal(got.err)
			}
			if got.code != tt.code || got.body != tt.body || !slices.Equal(got.retryAfter, tt.retryAfter) {
				t.Errorf("got %d %q Retry-After %q, want %d %q Retry-After %q",
					got.code, got.body, got.retryAfter, tt.code, tt.body, tt.retryAfter)
			}
		})
	}
}

func TestStepString(t *testing.T) {
	for _, tt := range []struct {
		step Step
		want string
	}{
		{Step{}, "Pass"},
		{Pass(), "Pass"},
		{Reset(), "Reset"},
		{ApplyThenReset(), "ApplyThenReset"},
		{Respond(0, ""), "Status(500)"},
		{Respond(418, "teapot"), "Status(418)"},
		{TooMany("2"), "Status(429, Retry-After: 2)"},
		{Unavailable(""), "Status(503)"},
		{Respond(502, "").WithRetryAfter("0"), "Status(502, Retry-After: 0)"},
		{Hang(), "Hang"},
		{Slow(time.Second), "Slow(1s)"},
	} {
		if got := tt.step.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// assertReset checks the error a client sees when its fresh connection is
// reset: on Linux, ECONNRESET from reading the response, never a response.
func assertReset(t *testing.T, got result) {
	t.Helper()
	if got.err == nil {
		t.Fatalf("got %d %q, want a connection reset error", got.code, got.body)
	}
	if !errors.Is(got.err, syscall.ECONNRESET) {
		t.Fatalf("got error %v (%#v), want errors.Is(err, syscall.ECONNRESET)", got.err, got.err)
	}
	if errors.Is(got.err, io.EOF) || errors.Is(got.err, io.ErrUnexpectedEOF) {
		t.Fatalf("got error %v: unexpectedly also EOF", got.err)
	}
}

func TestResetFreshConnection(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name, method, body string
	}{
		{"GET", http.MethodGet, ""},
		{"POST small body", http.MethodPost, `{"q":1}`},
		{"POST 1 MiB body", http.MethodPost, big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, calls, _ := counting()
			s, _ := startRec(t, h)
			c := NoKeepAliveClient()
			s.Enqueue("/r", Reset())
			got := do(c, newReq(t, context.Background(), tt.method, s.URL()+"/r", tt.body))
			assertReset(t, got)
			t.Logf("client error: %v", got.err)
			if n := calls.Load(); n != 0 {
				t.Errorf("handler ran %d times, want 0", n)
			}
			if n := s.Requests("/r"); n != 1 {
				t.Errorf("Requests = %d, want 1", n)
			}
			// The server is still healthy afterwards.
			if got := get(t, c, s.URL()+"/r"); got.err != nil || got.code != 200 {
				t.Errorf("after reset: %+v", got)
			}
		})
	}
}

func TestApplyThenReset(t *testing.T) {
	tests := []struct {
		name, method, body string
	}{
		{"GET", http.MethodGet, ""},
		{"POST", http.MethodPost, "amount=42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, calls, bs := counting()
			s, _ := startRec(t, h)
			c := NoKeepAliveClient()
			s.Enqueue("/charge", ApplyThenReset())
			got := do(c, newReq(t, context.Background(), tt.method, s.URL()+"/charge", tt.body))
			assertReset(t, got)
			if n := calls.Load(); n != 1 {
				t.Errorf("handler ran %d times, want exactly 1", n)
			}
			if b := bs.all(); !slices.Equal(b, []string{tt.body}) {
				t.Errorf("handler read bodies %q, want [%q]", b, tt.body)
			}
		})
	}
}

// TestResetReusedConnection documents what a stock net/http client sees
// when a Reset hits a reused keep-alive connection: replayable requests are
// silently retried by the Transport on a new connection.
func TestResetReusedConnection(t *testing.T) {
	tests := []struct {
		name       string
		step       Step
		method     string
		body       string
		header     string // Idempotency-Key value, if any
		wantReset  bool   // the client sees the reset
		wantReqs   int    // requests to /r seen by the server
		wantCalls  int32  // handler runs for /r
		wantReused []bool // GotConn.Reused of each attempt
	}{
		{"GET Reset is replayed", Reset(), http.MethodGet, "", "", false, 2, 1, []bool{true, false}},
		{"GET ApplyThenReset is replayed and applied twice", ApplyThenReset(), http.MethodGet, "", "", false, 2, 2, []bool{true, false}},
		{"POST with Idempotency-Key is replayed", Reset(), http.MethodPost, "a=1", "k1", false, 2, 1, []bool{true, false}},
		{"POST Reset is not replayed", Reset(), http.MethodPost, "a=1", "", true, 1, 0, []bool{true}},
		{"POST ApplyThenReset is not replayed", ApplyThenReset(), http.MethodPost, "a=1", "", true, 1, 1, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			s, _ := startRec(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/r" {
					calls.Add(1)
				}
				_, _ = io.WriteString(w, "ok")
			}))
			c := reuseClient(t)
			if got := get(t, c, s.URL()+"/warm"); got.err != nil || got.code != 200 {
				t.Fatalf("warm-up: %+v", got)
			}
			s.Enqueue("/r", tt.step)

			var mu sync.Mutex
			var reused []bool
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
				mu.Lock()
				reused = append(reused, i.Reused)
				mu.Unlock()
			}}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			req := newReq(t, ctx, tt.method, s.URL()+"/r", tt.body)
			if tt.header != "" {
				req.Header.Set("Idempotency-Key", tt.header)
			}
			got := do(c, req)
			if tt.wantReset {
				assertReset(t, got)
			} else if got.err != nil || got.code != 200 || got.body != "ok" {
				t.Errorf("got %+v, want the replayed 200 ok", got)
			}
			if n := s.Requests("/r"); n != tt.wantReqs {
				t.Errorf("server saw %d requests, want %d", n, tt.wantReqs)
			}
			if n := calls.Load(); n != tt.wantCalls {
				t.Errorf("handler ran %d times, want %d", n, tt.wantCalls)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(reused, tt.wantReused) {
				t.Errorf("connection reuse per attempt %v, want %v", reused, tt.wantReused)
			}
		})
	}
}

// TestResetKillsOnlyItsConnection resets one connection while another one
// of the same client has a request in flight.
func TestResetKillsOnlyItsConnection(t *testing.T) {
	s, rec := startRec(t, nil)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()

	s.Enqueue("/hang", Hang())
	hung := async(c, newReq(t, context.Background(), http.MethodGet, s.URL()+"/hang", ""))
	recv(t, rec.waiting, "the hung request")

	s.Enqueue("/reset", Reset())
	assertReset(t, do(c, newReq(t, context.Background(), http.MethodPost, s.URL()+"/reset", "x")))
	if got := get(t, c, s.URL()+"/ok"); got.err != nil || got.code != 200 {
		t.Fatalf("request after reset: %+v", got)
	}

	s.Release()
	got := recv(t, hung, "the released request")
	if got.err != nil || got.code != 503 || got.body != "toolsafetest: released\n" {
		t.Fatalf("hung request on the other connection: %+v, want 503 toolsafetest: released", got)
	}
}

func TestHang(t *testing.T) {
	tests := []struct {
		name   string
		method string
		body   string
	}{
		{"GET", http.MethodGet, ""},
		{"POST with body", http.MethodPost, "payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/client cancels", func(t *testing.T) {
			h, calls, _ := counting()
			s, rec := startRec(t, h)
			c := NoKeepAliveClient()
			s.Enqueue("/h", Hang())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := async(c, newReq(t, ctx, tt.method, s.URL()+"/h", tt.body))
			recv(t, rec.waiting, "the request to hang")
			cancel()
			got := recv(t, res, "the client to return")
			if !errors.Is(got.err, context.Canceled) {
				t.Fatalf("got %+v, want context.Canceled", got)
			}
			// The server noticed the client went away.
			recv(t, rec.finished, "the server to give up on the request")
			if n := calls.Load(); n != 0 {
				t.Errorf("handler ran %d times, want 0", n)
			}
		})
		t.Run(tt.name+"/Release", func(t *testing.T) {
			s, rec := startRec(t, nil)
			c := NoKeepAliveClient()
			s.Enqueue("/h", Hang())
			res := async(c, newReq(t, context.Background(), tt.method, s.URL()+"/h", tt.body))
			recv(t, rec.waiting, "the request to hang")
			s.Release()
			got := recv(t, res, "the client to return")
			if got.err != nil || got.code != 503 || got.body != "toolsafetest: released\n" {
				t.Fatalf("got %+v, want 503 toolsafetest: released", got)
			}
			// Released is permanent: later Hang steps answer at once.
			s.Always("/h", Hang())
			for range 3 {
				if got := get(t, c, s.URL()+"/h"); got.err != nil || got.code != 503 {
					t.Fatalf("Hang after Release: %+v, want 503", got)
				}
			}
		})
	}
}

func TestSlow(t *testing.T) {
	t.Run("answers after the delay", func(t *testing.T) {
		h, calls, _ := counting()
		s, _ := startRec(t, h)
		c := NoKeepAliveClient()
		const d = 30 * time.Millisecond
		s.Enqueue("/s", Slow(d))
		start := time.Now()
		got := get(t, c, s.URL()+"/s")
		if elapsed := time.Since(start); elapsed < d {
			t.Errorf("answered after %v, want at least %v", elapsed, d)
		}
		if got.err != nil || got.code != 200 || got.body != "ok" || calls.Load() != 1 {
			t.Errorf("got %+v (handler calls %d), want 200 ok once", got, calls.Load())
		}
	})
	t.Run("handler reads the body", func(t *testing.T) {
		h, _, bs := counting()
		s, _ := startRec(t, h)
		s.Enqueue("/s", Slow(time.Millisecond))
		got := do(NoKeepAliveClient(), newReq(t, context.Background(), http.MethodPost, s.URL()+"/s", "the body"))
		if got.err != nil || got.code != 200 || !slices.Equal(bs.all(), []string{"the body"}) {
			t.Errorf("got %+v, bodies %q", got, bs.all())
		}
	})
	t.Run("client cancels", func(t *testing.T) {
		h, calls, _ := counting()
		s, rec := startRec(t, h)
		s.Enqueue("/s", Slow(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := async(NoKeepAliveClient(), newReq(t, ctx, http.MethodPost, s.URL()+"/s", "b"))
		recv(t, rec.waiting, "the slow request")
		cancel()
		if got := recv(t, res, "the client to return"); !errors.Is(got.err, context.Canceled) {
			t.Fatalf("got %+v, want context.Canceled", got)
		}
		recv(t, rec.finished, "the server to give up on the request")
		if n := calls.Load(); n != 0 {
			t.Errorf("handler ran %d times, want 0", n)
		}
	})
	t.Run("Release skips the delay", func(t *testing.T) {
		h, calls, _ := counting()
		s, rec := startRec(t, h)
		s.Enqueue("/s", Slow(time.Hour))
		res := async(NoKeepAliveClient(), newReq(t, context.Background(), http.MethodGet, s.URL()+"/s", ""))
		recv(t, rec.waiting, "the slow request")
		s.Release()
		if got := recv(t, res, "the client to return"); got.err != nil || got.code != 200 || got.body != "ok" {
			t.Fatalf("got %+v, want 200 ok", got)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
	})
}

func TestRequests(t *testing.T) {
	s, rec := startRec(t, nil)
	c := NoKeepAliveClient()
	s.Enqueue("/a", Reset(), TooMany("1"), ApplyThenReset())
	s.Enqueue("/b", Respond(404, "no"))
	s.Enqueue("/h", Hang())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hung := async(c, newReq(t, ctx, http.MethodGet, s.URL()+"/h", ""))
	recv(t, rec.waiting, "the hung request")
	for _, p := range []string{"/a", "/a", "/a", "/a", "/b", "/b", "/c?x=1"} {
		get(t, c, s.URL()+p)
	}
	tests := []struct {
		path string
		want int
	}{
		{"/a", 4}, {"/b", 2}, {"/c", 1}, {"/h", 1}, {"/c?x=1", 0}, {"/nope", 0}, {"", 8},
	}
	for _, tt := range tests {
		if got := s.Requests(tt.path); got != tt.want {
			t.Errorf("Requests(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
	cancel()
	recv(t, hung, "the hung request to return")
}

// call is one request of a script and the status code it must get.
type call struct {
	path string
	want int
}

func TestScripts(t *testing.T) {
	tests := []struct {
		name   string
		script []any // func(*Upstream) or call
	}{
		{"Enqueue order, then Pass", []any{
			func(s *Upstream) { s.Enqueue("/x", Respond(501, ""), Respond(502, ""), Respond(503, "")) },
			call{"/x", 501}, call{"/y", 200}, call{"/x", 502}, call{"/x", 503}, call{"/x", 200},
		}},
		{"Enqueue appends", []any{
			func(s *Upstream) { s.Enqueue("/x", Respond(501, "")) },
			func(s *Upstream) { s.Enqueue("/x", Respond(502, "")) },
			call{"/x", 501}, call{"/x", 502}, call{"/x", 200},
		}},
		{"Enqueue without steps", []any{
			func(s *Upstream) { s.Enqueue("/x") },
			call{"/x", 200},
		}},
		{"path queue before any-path queue", []any{
			func(s *Upstream) { s.Enqueue("", Respond(418, ""), Respond(420, "")) },
			func(s *Upstream) { s.Enqueue("/x", Respond(501, "")) },
			call{"/x", 501}, call{"/x", 418}, call{"/y", 420}, call{"/x", 200}, call{"/y", 200},
		}},
		{"exact path, query ignored", []any{
			func(s *Upstream) { s.Enqueue("/x", Respond(501, ""), Respond(502, "")) },
			call{"/x/", 200}, call{"/X", 200}, call{"/x?a=1", 501}, call{"/x", 502},
		}},
		{"Always until Clear", []any{
			func(s *Upstream) { s.Always("/down", Unavailable("5")) },
			call{"/down", 503}, call{"/down", 503}, call{"/up", 200}, call{"/down", 503},
			func(s *Upstream) { s.Clear("/down") },
			call{"/down", 200},
		}},
		{"Always replaces Always", []any{
			func(s *Upstream) { s.Always("/x", Respond(501, "")) },
			func(s *Upstream) { s.Always("/x", Respond(502, "")) },
			call{"/x", 502}, call{"/x", 502},
		}},
		{"path queue before path Always", []any{
			func(s *Upstream) { s.Always("/x", Respond(503, "")) },
			func(s *Upstream) { s.Enqueue("/x", Respond(501, "")) },
			call{"/x", 501}, call{"/x", 503}, call{"/x", 503},
		}},
		{"path Always before any-path queue", []any{
			func(s *Upstream) { s.Always("/x", Respond(503, "")) },
			func(s *Upstream) { s.Enqueue("", Respond(418, "")) },
			call{"/x", 503}, call{"/y", 418}, call{"/y", 200},
		}},
		{"any-path Always, Clear of another path keeps it", []any{
			func(s *Upstream) { s.Always("", Respond(500, "")) },
			call{"/x", 500}, call{"/y", 500},
			func(s *Upstream) { s.Clear("/x") },
			call{"/x", 500},
			func(s *Upstream) { s.Clear("") },
			call{"/x", 200},
		}},
		{"Clear drops the queue", []any{
			func(s *Upstream) { s.Enqueue("/x", Respond(501, ""), Respond(502, "")) },
			call{"/x", 501},
			func(s *Upstream) { s.Clear("/x") },
			call{"/x", 200},
		}},
		{"scripts before Chaos", []any{
			func(s *Upstream) { s.Chaos(1, Chaos{TooMany: 1}) },
			func(s *Upstream) { s.Enqueue("/x", Respond(501, "")) },
			call{"/x", 501}, call{"/x", 429},
			func(s *Upstream) { s.Always("", Pass()) },
			call{"/x", 200},
		}},
		{"zero Chaos turns chaos off", []any{
			func(s *Upstream) { s.Chaos(1, Chaos{Unavailable: 1}) },
			call{"/x", 503},
			func(s *Upstream) { s.Chaos(0, Chaos{}) },
			call{"/x", 200},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := startRec(t, nil)
			c := NoKeepAliveClient()
			for i, op := range tt.script {
				switch op := op.(type) {
				case func(*Upstream):
					op(s)
				case call:
					got := get(t, c, s.URL()+op.path)
					if got.err != nil || got.code != op.want {
						t.Fatalf("script[%d]: GET %s = %d %v, want %d", i, op.path, got.code, got.err, op.want)
					}
				default:
					t.Fatalf("script[%d]: bad op %T", i, op)
				}
			}
		})
	}
}

// outcome summarises what a client saw, for comparing chaos runs.
func outcome(r result) string {
	switch {
	case errors.Is(r.err, syscall.ECONNRESET):
		return "reset"
	case r.err != nil:
		return "error: " + r.err.Error()
	}
	return strings.Join(append([]string{http.StatusText(r.code)}, r.retryAfter...), " ") + " " + r.body
}

// clientSees is what a client must see for a chaos step; Hang answers at
// once because the server is released.
func clientSees(st Step) string {
	switch st.action {
	case reset:
		return "reset"
	case hang:
		return "Service Unavailable toolsafetest: released\n"
	case status:
		switch st.code {
		case 429:
			return "Too Many Requests 3 toolsafetest: too many requests\n"
		case 503:
			return "Service Unavailable 3 toolsafetest: service unavailable\n"
		}
	case pass, slow:
		return "OK ok"
	}
	return "unexpected step " + st.String()
}

func TestChaos(t *testing.T) {
	p := Chaos{Reset: 0.1, TooMany: 0.15, Unavailable: 0.15, Hang: 0.1, Slow: 0.1, RetryAfter: "3", SlowDelay: time.Microsecond}
	const n = 100

	// run sends n sequential requests; every third one is scripted if
	// scripted is set. It returns the steps taken for unscripted requests
	// and what the client saw for them.
	run := func(t *testing.T, seed uint64, scripted bool) ([]Step, []string) {
		s, rec := startRec(t, nil)
		s.Release() // Hang answers 503 at once
		s.Chaos(seed, p)
		c := NoKeepAliveClient()
		var seen []string
		for i := range n {
			if scripted && i%3 == 0 {
				s.Enqueue("/tool", Respond(299, "scripted"))
				if got := get(t, c, s.URL()+"/tool"); got.code != 299 {
					t.Fatalf("scripted request: %+v", got)
				}
				continue
			}
			seen = append(seen, outcome(get(t, c, s.URL()+"/tool")))
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var steps []Step
		for _, st := range rec.steps {
			if st.code != 299 {
				steps = append(steps, st)
			}
		}
		return steps, seen
	}

	steps, seen := run(t, 42, false)
	if len(steps) != n || len(seen) != n {
		t.Fatalf("got %d steps and %d outcomes, want %d", len(steps), len(seen), n)
	}
	kinds := map[string]int{}
	for i, st := range steps {
		if want := clientSees(st); seen[i] != want {
			t.Errorf("request %d: step %v, client saw %q, want %q", i, st, seen[i], want)
		}
		kinds[st.String()]++
	}
	t.Logf("seed 42: %v", kinds)
	for _, k := range []string{"Pass", "Reset", "Status(429, Retry-After: 3)", "Status(503, Retry-After: 3)", "Hang", "Slow(1µs)"} {
		if kinds[k] == 0 {
			t.Errorf("no %s step in %d requests", k, n)
		}
	}

	tests := []struct {
		name     string
		seed     uint64
		scripted bool
		same     bool
	}{
		{"same seed", 42, false, true},
		{"same seed, scripted requests draw nothing", 42, true, true},
		{"other seed", 43, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps2, seen2 := run(t, tt.seed, tt.scripted)
			k := min(len(steps), len(steps2))
			same := slices.Equal(steps[:k], steps2[:k]) && slices.Equal(seen[:k], seen2[:k])
			if same != tt.same {
				t.Errorf("same sequence = %v, want %v", same, tt.same)
			}
		})
	}

	t.Run("invalid probabilities panic", func(t *testing.T) {
		s := NewUpstream(nil)
		defer s.Close()
		for _, bad := range []Chaos{{Reset: -0.1}, {Reset: 0.6, Hang: 0.5}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Chaos(%+v) did not panic", bad)
					}
				}()
				s.Chaos(1, bad)
			}()
		}
	})
}

// TestClose closes a server with a hung request, a handler blocked on its
// request context, a half-sent request and an idle connection, then checks
// that Close returned and nothing leaked.
func TestClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	entered := make(chan struct{})
	waiting := make(chan string, 1)
	s := newUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			close(entered)
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "ok")
	}), hooks{waiting: func(p string, _ Step) { waiting <- p }})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	// A hung request the client never gives up on.
	s.Enqueue("/hang", Hang())
	hung := async(c, newReq(t, context.Background(), http.MethodGet, s.URL()+"/hang", ""))
	recv(t, waiting, "the hung request")
	// A Pass request whose handler blocks until its context is done.
	blocked := async(c, newReq(t, context.Background(), http.MethodPost, s.URL()+"/block", "x"))
	recv(t, entered, "the blocking handler")
	// An idle keep-alive connection.
	if got := get(t, c, s.URL()+"/"); got.err != nil || got.code != 200 {
		t.Fatalf("idle request: %+v", got)
	}
	// A connection with half a request.
	raw, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := io.WriteString(raw, "GET / HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
	}()
	recv(t, closed, "Close to return")
	s.Close() // idempotent

	// The hung request is answered 503 by Release or cut by the shutdown,
	// depending on which wins the race; either way it returns.
	if got := recv(t, hung, "the hung request"); got.err == nil && got.code != 503 {
		t.Errorf("hung request: %+v, want 503 or an error", got)
	}
	if got := recv(t, blocked, "the blocked request"); got.err == nil {
		t.Errorf("blocked request: %+v, want an error", got)
	}
	_ = raw.SetReadDeadline(time.Now().Add(watchdog))
	// Linux answers close() with a FIN, or with a RST if the server had
	// not yet read the half request from its socket.
	if n, err := raw.Read(make([]byte, 1)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("half-sent request: read %d, %v; want io.EOF or ECONNRESET", n, err)
	}
	if _, err := c.Get(s.URL()); err == nil {
		t.Errorf("request after Close succeeded")
	}
}
