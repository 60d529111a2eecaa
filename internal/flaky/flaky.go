package flaky

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// Action says what the server does with one request.
type Action int

const (
	// Pass hands the request to the server's handler (the healthy answer).
	Pass Action = iota

	// Reset reads the request (including its body), then closes the TCP
	// connection abruptly with a RST: the connection is hijacked, its
	// linger time is set to zero and it is closed. The handler is not
	// run. Only the connection that carried this request is affected.
	//
	// On Linux a Go client on a fresh connection sees an error for which
	// errors.Is(err, syscall.ECONNRESET) is true. On a reused keep-alive
	// connection, net/http's Transport silently retries replayable
	// requests (GET, HEAD, OPTIONS, TRACE, or any method carrying an
	// Idempotency-Key or X-Idempotency-Key header, with a rewindable
	// body), so such a client sees the answer to the retry instead.
	Reset

	// ApplyThenReset runs the handler (so its side effect is applied) with
	// a ResponseWriter that discards everything, then resets the
	// connection as Reset does: the client never sees the answer.
	ApplyThenReset

	// Status answers Step.Code with body Step.Body and, if Step.RetryAfter
	// is not empty, a Retry-After header. The handler is not run.
	Status

	// Hang never answers: the request blocks until the client goes away
	// (its request context is done) or Release or Close is called, in
	// which case it answers 503 Service Unavailable. The handler is not
	// run.
	Hang

	// Slow waits Step.Delay, then behaves as Pass. If the client goes
	// away first, the handler is not run; if Release or Close is called
	// first, the handler runs at once.
	Slow
)

// String returns the name of the action, e.g. "Reset".
func (a Action) String() string {
	switch a {
	case Pass:
		return "Pass"
	case Reset:
		return "Reset"
	case ApplyThenReset:
		return "ApplyThenReset"
	case Status:
		return "Status"
	case Hang:
		return "Hang"
	case Slow:
		return "Slow"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Step is the scripted fate of one request. The zero Step is Pass.
type Step struct {
	// Action is what the server does with the request.
	Action Action

	// Code is the HTTP status code answered by a Status step; it must be
	// a valid code (100-999). Zero means 500 Internal Server Error.
	// Ignored by other actions.
	Code int

	// RetryAfter is the Retry-After header value sent by a Status step,
	// verbatim: a number of seconds such as "2" or an HTTP-date. Empty
	// means no Retry-After header. Ignored by other actions.
	RetryAfter string

	// Body is the response body sent by a Status step. Empty means an
	// empty body. Ignored by other actions.
	Body string

	// Delay is how long a Slow step waits before running the handler.
	// Zero or negative means no wait (the step then behaves as Pass).
	// Ignored by other actions.
	Delay time.Duration
}

// String describes the step, e.g. "Status(429, Retry-After: 2)".
func (st Step) String() string {
	switch st.Action {
	case Status:
		if st.RetryAfter != "" {
			return fmt.Sprintf("Status(%d, Retry-After: %s)", st.code(), st.RetryAfter)
		}
		return fmt.Sprintf("Status(%d)", st.code())
	case Slow:
		return fmt.Sprintf("Slow(%v)", st.Delay)
	}
	return st.Action.String()
}

// code returns the status code a Status step answers.
func (st Step) code() int {
	if st.Code == 0 {
		return http.StatusInternalServerError
	}
	return st.Code
}

// OK returns a step that passes the request to the handler: Step{Action: Pass}.
func OK() Step { return Step{Action: Pass} }

// ResetConn returns a step that resets the connection without running the
// handler. See Reset.
func ResetConn() Step { return Step{Action: Reset} }

// ApplyReset returns a step that runs the handler, discards its answer and
// resets the connection. See ApplyThenReset.
func ApplyReset() Step { return Step{Action: ApplyThenReset} }

// Respond returns a step that answers the HTTP status code with body,
// without a Retry-After header. Code zero means 500.
func Respond(code int, body string) Step {
	return Step{Action: Status, Code: code, Body: body}
}

// TooMany returns a step that answers 429 Too Many Requests with the
// Retry-After header set verbatim to retryAfter ("2" for two seconds, or an
// HTTP-date). An empty retryAfter means no header.
func TooMany(retryAfter string) Step {
	return Step{Action: Status, Code: http.StatusTooManyRequests, RetryAfter: retryAfter,
		Body: "flaky: too many requests\n"}
}

// Unavailable returns a step that answers 503 Service Unavailable with the
// Retry-After header set verbatim to retryAfter. An empty retryAfter means
// no header.
func Unavailable(retryAfter string) Step {
	return Step{Action: Status, Code: http.StatusServiceUnavailable, RetryAfter: retryAfter,
		Body: "flaky: service unavailable\n"}
}

// HangUp returns a step that never answers until the client goes away or
// the server is released. See Hang.
func HangUp() Step { return Step{Action: Hang} }

// SlowAnswer returns a step that waits d, then passes the request to the
// handler. Zero d means no wait. See Slow.
func SlowAnswer(d time.Duration) Step { return Step{Action: Slow, Delay: d} }

// Chaos gives the probabilities of random faults injected by Server.Chaos.
// Each probability is in [0, 1] and their sum must not exceed 1; the rest
// of the probability mass is Pass. The zero Chaos injects no fault.
type Chaos struct {
	// Reset is the probability of a Reset step.
	Reset float64
	// TooMany is the probability of a TooMany(RetryAfter) step.
	TooMany float64
	// Unavailable is the probability of an Unavailable(RetryAfter) step.
	Unavailable float64
	// Hang is the probability of a Hang step.
	Hang float64
	// Slow is the probability of a SlowAnswer(SlowDelay) step.
	Slow float64

	// RetryAfter is the Retry-After header value sent with TooMany and
	// Unavailable faults, verbatim. Empty means no header.
	RetryAfter string

	// SlowDelay is the delay of Slow faults. Zero means no delay.
	SlowDelay time.Duration
}

// pick maps x in [0, 1) to a step.
func (c Chaos) pick(x float64) Step {
	if x -= c.Reset; x < 0 {
		return ResetConn()
	}
	if x -= c.TooMany; x < 0 {
		return TooMany(c.RetryAfter)
	}
	if x -= c.Unavailable; x < 0 {
		return Unavailable(c.RetryAfter)
	}
	if x -= c.Hang; x < 0 {
		return HangUp()
	}
	if x -= c.Slow; x < 0 {
		return SlowAnswer(c.SlowDelay)
	}
	return OK()
}

// Server is a real HTTP/1.1 server listening on a random port of
// 127.0.0.1, whose answer to each request is scripted by Enqueue, Always and
// Chaos. Create it with Start and stop it with Close. All methods are safe
// for concurrent use.
type Server struct {
	handler http.Handler
	ln      net.Listener
	srv     *http.Server
	url     string

	serveDone chan struct{}      // closed when srv.Serve has returned
	baseCtx   context.Context    // parent of every request context
	cancel    context.CancelFunc // cancels baseCtx, on Close
	released  chan struct{}      // closed by Release
	relOnce   sync.Once
	closeOnce sync.Once
	inflight  sync.WaitGroup // requests being handled; Add only under mu while !closed

	hooks hooks // set before serving; read-only afterwards

	mu     sync.Mutex
	closed bool
	queues map[string][]Step
	always map[string]Step
	chaos  Chaos
	rng    *rand.Rand // nil: no chaos
	counts map[string]int
	total  int
}

// hooks lets the package's tests observe the server without sleeping.
type hooks struct {
	decided  func(path string, st Step) // a step was chosen for a request
	waiting  func(path string, st Step) // a Hang or Slow request started waiting
	finished func(path string)          // the request's step has returned
}

// defaultHandler answers 200 "ok".
var defaultHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok")
})

// Start starts a server listening on 127.0.0.1 on a port chosen by the
// system. Requests whose step is Pass (every request, until faults are
// scripted) are answered by h; a nil h answers 200 with body "ok". Start
// panics if it cannot listen. Call Close when done.
func Start(h http.Handler) *Server {
	return start(h, hooks{})
}

func start(h http.Handler, hk hooks) *Server {
	if h == nil {
		h = defaultHandler
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("flaky: cannot listen on 127.0.0.1: %v", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		baseCtx:   ctx,
		cancel:    cancel,
		handler:   h,
		ln:        ln,
		url:       "http://" + ln.Addr().String(),
		serveDone: make(chan struct{}),
		released:  make(chan struct{}),
		hooks:     hk,
		queues:    make(map[string][]Step),
		always:    make(map[string]Step),
		counts:    make(map[string]int),
	}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: time.Minute,
		// net/http cancels a request's context when its connection
		// closes only once the body has been read; Close cancels them
		// all through this context instead.
		BaseContext: func(net.Listener) context.Context { return s.baseCtx },
		// Clients going away mid-request are the point of this server;
		// do not log them.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(s.serveDone)
		_ = s.srv.Serve(ln)
	}()
	return s
}

// URL returns the base URL of the server, "http://127.0.0.1:PORT", without
// a trailing slash.
func (s *Server) URL() string { return s.url }

// Enqueue scripts the next requests whose URL path is exactly path
// (r.URL.Path, without the query): they get steps in order, after any
// steps already queued for path; once the queue is empty, requests fall
// back to the Always step, Chaos, or Pass. The empty path "" is a queue
// consulted by requests to any path, after the path's own queue and Always
// step. Enqueue with no steps does nothing.
//
// The step of a request is the first of: the head of its path's queue, its
// path's Always step, the head of the "" queue, the "" Always step, a Chaos
// draw, Pass.
func (s *Server) Enqueue(path string, steps ...Step) {
	if len(steps) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[path] = append(s.queues[path], steps...)
}

// Always makes every request to path ("" = any path) get step, like an
// upstream that never recovers, until Clear(path) or another Always(path).
// Steps queued by Enqueue for the same path are used first.
func (s *Server) Always(path string, step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[path] = step
}

// Clear drops the steps queued for path and its Always step. Clear("")
// clears the "" (any path) entries only, not those of other paths. Chaos
// and request counts are not affected.
func (s *Server) Clear(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.queues, path)
	delete(s.always, path)
}

// Chaos injects random faults, with the probabilities in p, into every
// request that no Enqueue or Always step applies to. The faults are drawn
// from a math/rand/v2 PCG generator seeded with seed, one draw per such
// request, so a given seed yields the same sequence of steps for the same
// sequence of unscripted requests (concurrent requests are drawn in arrival
// order). Calling Chaos again restarts the sequence; Chaos(0, Chaos{})
// turns chaos off. Chaos panics if a probability is negative or they sum
// to more than 1.
func (s *Server) Chaos(seed uint64, p Chaos) {
	sum := 0.0
	for _, q := range []float64{p.Reset, p.TooMany, p.Unavailable, p.Hang, p.Slow} {
		if q < 0 || math.IsNaN(q) {
			panic(fmt.Sprintf("flaky: invalid chaos probability %v", q))
		}
		sum += q
	}
	if sum > 1+1e-9 {
		panic(fmt.Sprintf("flaky: chaos probabilities sum to %v > 1", sum))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chaos = p
	s.rng = nil
	if sum > 0 {
		s.rng = rand.New(rand.NewPCG(seed, 0x666c616b79)) // "flaky"
	}
}

// Requests returns the number of requests received for the URL path path
// ("" = all paths) since Start. A request is counted when it arrives,
// before its step runs, whatever the step; requests retried by a client
// count again.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path == "" {
		return s.total
	}
	return s.counts[path]
}

// Release unblocks every Hang request in flight (it answers 503) and every
// Slow request in flight (its handler runs at once). It is permanent:
// later Hang steps answer 503 at once and later Slow steps do not wait.
// Release is idempotent.
func (s *Server) Release() {
	s.relOnce.Do(func() { close(s.released) })
}

// Close releases the server (see Release), then shuts it down: it closes
// the listener and every connection, including those with a hung request,
// cancels the context of every request in flight, and waits for the
// serving goroutine and the requests in flight to return. Requests that
// arrive while Close runs are answered 503. Close does not
// wait for clients; it does wait for the handler passed to Start, which
// must therefore return once its request's context is done. Close is
// idempotent; concurrent calls wait for the first one.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.Release()
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		_ = s.srv.Close() // listener and all non-hijacked connections
		s.cancel()        // every request context
		<-s.serveDone
		s.inflight.Wait()
	})
}

// next counts the request and chooses its step.
func (s *Server) next(path string) (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	s.counts[path]++
	if s.closed {
		return Step{}, false
	}
	s.inflight.Add(1)
	if st, ok := s.scriptedLocked(path); ok {
		return st, true
	}
	if path != "" {
		if st, ok := s.scriptedLocked(""); ok {
			return st, true
		}
	}
	if s.rng != nil {
		return s.chaos.pick(s.rng.Float64()), true
	}
	return OK(), true
}

func (s *Server) scriptedLocked(key string) (Step, bool) {
	if q := s.queues[key]; len(q) > 0 {
		st := q[0]
		if len(q) == 1 {
			delete(s.queues, key)
		} else {
			s.queues[key] = q[1:]
		}
		return st, true
	}
	st, ok := s.always[key]
	return st, ok
}

// serve is the http.Handler of the underlying server.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	st, ok := s.next(r.URL.Path)
	if !ok {
		http.Error(w, "flaky: server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.inflight.Done()
	if s.hooks.finished != nil {
		defer s.hooks.finished(r.URL.Path)
	}
	if s.hooks.decided != nil {
		s.hooks.decided(r.URL.Path, st)
	}

	switch st.Action {
	case Pass:
		s.handler.ServeHTTP(w, r)

	case Reset:
		reset(w, r)

	case ApplyThenReset:
		s.handler.ServeHTTP(discard{h: make(http.Header)}, r)
		reset(w, r)

	case Status:
		if st.RetryAfter != "" {
			w.Header().Set("Retry-After", st.RetryAfter)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(st.code())
		_, _ = io.WriteString(w, st.Body)

	case Hang:
		// Reading the body to its end lets net/http notice a client
		// that goes away and cancel r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		if s.hooks.waiting != nil {
			s.hooks.waiting(r.URL.Path, st)
		}
		select {
		case <-r.Context().Done():
		case <-s.released:
			http.Error(w, "flaky: released", http.StatusServiceUnavailable)
		}

	case Slow:
		// Buffer the body so that a client going away is noticed while
		// waiting, yet the handler still reads it.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client went away while sending
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if s.hooks.waiting != nil {
			s.hooks.waiting(r.URL.Path, st)
		}
		if st.Delay > 0 {
			t := time.NewTimer(st.Delay)
			select {
			case <-t.C:
			case <-s.released:
				t.Stop()
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		s.handler.ServeHTTP(w, r)

	default:
		http.Error(w, fmt.Sprintf("flaky: unknown action %v", st.Action), http.StatusInternalServerError)
	}
}

// reset reads the rest of the request body, then closes the connection
// with a TCP RST.
func reset(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Cannot happen with this package's HTTP/1.1 server; make the
		// failure visible rather than answering normally.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // Close sends RST instead of FIN
	}
	_ = conn.Close()
}

// discard is the ResponseWriter of ApplyThenReset: it accepts and drops
// everything the handler writes.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
func (d discard) Flush()                      {}
