package toolsafetest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// serve is the http.Handler of the underlying server.
func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	st, ok := u.next(r.URL.Path)
	if !ok {
		http.Error(w, "toolsafetest: upstream closed", http.StatusServiceUnavailable)
		return
	}
	defer u.inflight.Done()
	if u.hooks.finished != nil {
		defer u.hooks.finished(r.URL.Path)
	}
	if u.hooks.decided != nil {
		u.hooks.decided(r.URL.Path, st)
	}

	switch st.action {
	case pass:
		u.handler.ServeHTTP(w, r)

	case reset:
		resetConn(w, r)

	case applyThenReset:
		u.handler.ServeHTTP(discard{h: make(http.Header)}, r)
		resetConn(w, r)

	case status:
		if st.retryAfter != "" {
			w.Header().Set("Retry-After", st.retryAfter)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(st.statusCode())
		_, _ = io.WriteString(w, st.body)

	case hang:
		// Reading the body to its end lets net/http notice a client
		// that goes away and cancel r.Context().
		_, _ = io.Copy(io.Discard, r.Body)
		if u.hooks.waiting != nil {
			u.hooks.waiting(r.URL.Path, st)
		}
		select {
		case <-r.Context().Done():
		case <-u.released:
			http.Error(w, "toolsafetest: released", http.StatusServiceUnavailable)
		}

	case slow:
		// Buffer the body so that a client going away is noticed while
		// waiting, yet the handler still reads it.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client went away while sending
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if u.hooks.waiting != nil {
			u.hooks.waiting(r.URL.Path, st)
		}
		if st.delay > 0 {
			t := time.NewTimer(st.delay)
			select {
			case <-t.C:
			case <-u.released:
				t.Stop()
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		u.handler.ServeHTTP(w, r)

	default:
		http.Error(w, fmt.Sprintf("toolsafetest: unknown step %v", st), http.StatusInternalServerError)
	}
}

// resetConn reads the rest of the request body, then closes the connection
// with a TCP RST.
func resetConn(w http.ResponseWriter, r *http.Request) {
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
