package testkit

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

// Stuck returns a tool named "stuck" that ignores its context: it tells
// calls (when not nil) that it was called, then blocks until release is
// closed, and answers "late".
func Stuck(release <-chan struct{}, calls chan<- struct{}) tools.Tool {
	return middleware.Func("stuck", "never answers", func(context.Context, string) (string, error) {
		if calls != nil {
			calls <- struct{}{}
		}
		<-release
		return "late", nil
	})
}

// Counting returns a tool called name that counts its calls in calls and
// answers "cached: " and its input.
func Counting(name string, calls *atomic.Int32) tools.Tool {
	return middleware.Func(name, "answers from a cache", func(_ context.Context, input string) (string, error) {
		calls.Add(1)
		return "cached: " + input, nil
	})
}

// Done returns a tool called name that counts its runs in ran and answers
// "done".
func Done(name string, ran *atomic.Int32) tools.Tool {
	return middleware.Func(name, "", func(context.Context, string) (string, error) {
		ran.Add(1)
		return "done", nil
	})
}

// Approver is an approval.Approver that answers Decision to every request
// and keeps the requests it was asked, in order. It is safe for concurrent
// use.
type Approver struct {
	// Decision is the answer to every request.
	Decision approval.Decision

	mu    sync.Mutex
	asked []approval.CallInfo
}

// Decide keeps c and answers a.Decision, with no error.
func (a *Approver) Decide(_ context.Context, c approval.CallInfo) (approval.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, c)
	return a.Decision, nil
}

// Asked returns a copy of the requests a was asked so far, in order.
func (a *Approver) Asked() []approval.CallInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]approval.CallInfo(nil), a.asked...)
}

// Refund returns a tool named "refund" that counts its runs in ran and
// answers "refunded " and its input.
func Refund(ran *atomic.Int32) tools.Tool {
	return middleware.Func("refund", "Refunds an order.", func(_ context.Context, in string) (string, error) {
		ran.Add(1)
		return "refunded " + in, nil
	})
}

// Refusing returns a tool called name whose every call, counted in calls,
// fails with a refused connection (a *net.OpError around
// syscall.ECONNREFUSED).
func Refusing(name string, calls *atomic.Int32) tools.Tool {
	return middleware.Func(name, "always down", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	})
}

// Ignoring returns a tool called name that ignores its context: it answers
// "late" only once t has ended (its cleanup releases it), so only toolsafe
// can bound a call to it.
func Ignoring(t testing.TB, name string) tools.Tool {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return middleware.Func(name, "ignores its context", func(context.Context, string) (string, error) {
		<-release
		return "late", nil
	})
}

// Held is an upstream handler that tells Arrived the path of each request
// and holds it until Release is closed (then Next answers it) or the client
// goes away. Make one with Hold.
type Held struct {
	// Next answers the requests once released.
	Next http.Handler
	// Arrived gets the URL path of every request as it arrives; it buffers
	// 256, and a request waits for room.
	Arrived chan string
	// Release, once closed, lets every request held, and every later one,
	// through to Next.
	Release chan struct{}
}

// Hold returns a Held in front of next.
func Hold(next http.Handler) *Held {
	return &Held{Next: next, Arrived: make(chan string, 256), Release: make(chan struct{})}
}

// ServeHTTP tells Arrived, then holds the request.
func (h *Held) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.Arrived <- r.URL.Path
	select {
	case <-h.Release:
		h.Next.ServeHTTP(w, r)
	case <-r.Context().Done():
	}
}
