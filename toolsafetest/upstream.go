package toolsafetest

import (
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

// Upstream is a real HTTP/1.1 server on a random port of 127.0.0.1 whose
// answer to each request is scripted by Enqueue, Always and Chaos: the
// flaky service behind a tool under test. Nothing is mocked: the tool's
// requests cross a real TCP connection, so resets and timeouts are the ones
// its HTTP client really sees, and Requests counts what really arrived.
// Make one with NewUpstream and stop it with Close. Its methods are safe for
// concurrent use.
type Upstream struct {
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

// hooks lets the package's tests observe the upstream without sleeping.
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

// NewUpstream starts an Upstream listening on 127.0.0.1, on a port the
// system chooses (see URL). Requests whose step is Pass (every request,
// until faults are scripted) are answered by h; a nil h answers 200 with the
// body "ok". It panics if it cannot listen, as httptest.NewServer does.
// Call Close when done.
func NewUpstream(h http.Handler) *Upstream {
	return newUpstream(h, hooks{})
}

func newUpstream(h http.Handler, hk hooks) *Upstream {
	if h == nil {
		h = defaultHandler
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("toolsafetest: cannot listen on 127.0.0.1: %v", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &Upstream{
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
	u.srv = &http.Server{
		Handler:           http.HandlerFunc(u.serve),
		ReadHeaderTimeout: time.Minute,
		// net/http cancels a request's context when its connection
		// closes only once the body has been read; Close cancels them
		// all through this context instead.
		BaseContext: func(net.Listener) context.Context { return u.baseCtx },
		// Clients going away mid-request are the point of this server;
		// do not log them.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(u.serveDone)
		_ = u.srv.Serve(ln)
	}()
	return u
}

// URL returns the base URL of the upstream, "http://127.0.0.1:PORT",
// without a trailing slash.
func (u *Upstream) URL() string { return u.url }

// Enqueue scripts the next requests whose URL path is exactly path
// (r.URL.Path, without the query): they get steps in order, after any steps
// already queued for path; once the queue is empty, requests fall back to
// the Always step, Chaos, or Pass. The empty path "" is a queue consulted by
// requests to any path, after the path's own queue and Always step. Enqueue
// with no steps does nothing.
//
// The step of a request is the first of: the head of its path's queue, its
// path's Always step, the head of the "" queue, the "" Always step, a Chaos
// draw, Pass.
func (u *Upstream) Enqueue(path string, steps ...Step) {
	if len(steps) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queues[path] = append(u.queues[path], steps...)
}

// Always makes every request to path ("" = any path) get step, like an
// upstream that never recovers, until Clear(path) or another Always(path).
// Steps queued by Enqueue for the same path are used first.
func (u *Upstream) Always(path string, step Step) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.always[path] = step
}

// Clear drops the steps queued for path and its Always step. Clear("")
// clears the "" (any path) entries only, not those of other paths. Chaos and
// request counts are not affected.
func (u *Upstream) Clear(path string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.queues, path)
	delete(u.always, path)
}

// Chaos injects random faults, with the probabilities in p, into every
// request that no Enqueue or Always step applies to. The faults are drawn
// from a math/rand/v2 PCG generator seeded with seed, one draw per such
// request, so a given seed yields the same sequence of steps for the same
// sequence of unscripted requests (concurrent requests are drawn in arrival
// order). Calling Chaos again restarts the sequence; Chaos(0, Chaos{}) turns
// chaos off. Chaos panics if a probability is negative or NaN, or if they
// sum to more than 1.
func (u *Upstream) Chaos(seed uint64, p Chaos) {
	sum := 0.0
	for _, q := range []float64{p.Reset, p.TooMany, p.Unavailable, p.Hang, p.Slow} {
		if q < 0 || math.IsNaN(q) {
			panic(fmt.Sprintf("toolsafetest: invalid chaos probability %v", q))
		}
		sum += q
	}
	if sum > 1+1e-9 {
		panic(fmt.Sprintf("toolsafetest: chaos probabilities sum to %v > 1", sum))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.chaos = p
	u.rng = nil
	if sum > 0 {
		u.rng = rand.New(rand.NewPCG(seed, 0x666c616b79)) // "flaky"
	}
}

// Requests returns the number of requests received for the URL path path
// ("" = all paths) since NewUpstream. A request is counted when it arrives,
// before its step runs, whatever the step; a request that a client resends
// counts again, which is why a test that counts attempts uses
// NoKeepAliveClient.
func (u *Upstream) Requests(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if path == "" {
		return u.total
	}
	return u.counts[path]
}

// Release unblocks every Hang request in flight (it answers 503) and every
// Slow request in flight (its handler runs at once). It is permanent: later
// Hang steps answer 503 at once and later Slow steps do not wait. Release is
// idempotent.
func (u *Upstream) Release() {
	u.relOnce.Do(func() { close(u.released) })
}

// Close releases the upstream (see Release), then shuts it down: it closes
// the listener and every connection, including those with a hung request,
// cancels the context of every request in flight, and waits for the serving
// goroutine and the requests in flight to return. Requests that arrive while
// Close runs are answered 503. Close does not wait for clients; it does wait
// for the handler given to NewUpstream, which must therefore return once its
// request's context is done. Close leaves no goroutine of this package
// behind. It is idempotent; concurrent calls wait for the first one.
func (u *Upstream) Close() {
	u.closeOnce.Do(func() {
		u.Release()
		u.mu.Lock()
		u.closed = true
		u.mu.Unlock()
		_ = u.srv.Close() // listener and all non-hijacked connections
		u.cancel()        // every request context
		<-u.serveDone
		u.inflight.Wait()
	})
}

// next counts the request and chooses its step.
func (u *Upstream) next(path string) (Step, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.total++
	u.counts[path]++
	if u.closed {
		return Step{}, false
	}
	u.inflight.Add(1)
	if st, ok := u.scriptedLocked(path); ok {
		return st, true
	}
	if path != "" {
		if st, ok := u.scriptedLocked(""); ok {
			return st, true
		}
	}
	if u.rng != nil {
		return u.chaos.pick(u.rng.Float64()), true
	}
	return Pass(), true
}

func (u *Upstream) scriptedLocked(key string) (Step, bool) {
	if q := u.queues[key]; len(q) > 0 {
		st := q[0]
		if len(q) == 1 {
			delete(u.queues, key)
		} else {
			u.queues[key] = q[1:]
		}
		return st, true
	}
	st, ok := u.always[key]
	return st, ok
}

// NoKeepAliveClient returns an HTTP client whose every request opens a new
// connection, closed after its answer, for the tools under test to call an
// Upstream with.
//
// Go's http.Transport, on a reused keep-alive connection that the server
// resets before answering, silently resends a request it deems replayable:
// a GET, HEAD, OPTIONS or TRACE, or any request carrying an Idempotency-Key
// (or X-Idempotency-Key) header with a rewindable body. The resend happens
// below the tool and below toolsafe, so a Reset or ApplyThenReset step would
// vanish (the tool sees the second answer), the attempts toolsafe counts
// would not match the requests the Upstream counts, and an ApplyThenReset
// would apply its side effect twice. On a fresh connection every reset
// reaches the tool as an error (errors.Is(err, syscall.ECONNRESET)), so an
// attempt is exactly one request. Each call returns a new client with its
// own Transport; it holds no idle connection, so it needs no cleanup.
func NoKeepAliveClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}
