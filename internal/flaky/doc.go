// Package flaky provides a real HTTP server whose faults are scripted per
// request, for testing code that must survive unreliable upstreams (retries,
// timeouts, circuit breakers around LLM agent tools).
//
// The server is a plain net/http server on a real TCP listener on
// 127.0.0.1 with a random port; nothing is mocked. Each request gets a
// [Step]: pass it to the handler, reset the TCP connection (before or after
// applying the handler's side effect), answer a status such as 429 with a
// Retry-After header, hang until the client gives up, or answer slowly.
// Steps are scripted per URL path with [Server.Enqueue] (the next requests)
// and [Server.Always] (every request until [Server.Clear]), or drawn at
// random, reproducibly, with [Server.Chaos].
//
// Usage:
//
//	var charged atomic.Int32
//	s := flaky.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//		charged.Add(1)
//		fmt.Fprint(w, `{"status":"charged"}`)
//	}))
//	defer s.Close()
//
//	// The next two calls to /charge fail, then the handler answers again.
//	s.Enqueue("/charge",
//		flaky.TooMany("1"), // 429 with Retry-After: 1
//		flaky.ApplyReset(), // charges, then resets: the client never learns
//	)
//	// The next request to any other path hangs until the client gives up.
//	s.Enqueue("", flaky.HangUp())
//
//	// ... exercise the code under test against s.URL()+"/charge" ...
//
//	attempts := s.Requests("/charge") // requests that reached the server
//	applied := charged.Load()         // side effects actually applied
//
// A caveat when reading results: on a reused keep-alive connection,
// net/http's Transport transparently retries a replayable request (GET,
// HEAD, OPTIONS, TRACE, or one with an Idempotency-Key header) whose
// connection was reset before any answer, so a [Reset] or [ApplyThenReset]
// step may be invisible to such a client and consume two requests (and, for
// ApplyThenReset, apply the side effect twice). On a fresh connection the
// client sees the reset as an error matching syscall.ECONNRESET.
//
// Close shuts everything down without waiting for hung clients and leaves no
// goroutine of this package behind.
package flaky
