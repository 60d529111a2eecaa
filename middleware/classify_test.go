package middleware_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe/middleware"
)

// wrapDeep wraps err the way real code does: a *url.Error around a
// *net.OpError around an *os.SyscallError, then fmt.Errorf and errors.Join.
func wrapDeep(err error) error {
	err = &url.Error{Op: "Get", URL: "http://127.0.0.1/invoice", Err: err}
	err = fmt.Errorf("fetch invoice: %w", err)
	return errors.Join(errors.New("cleanup: nothing"), fmt.Errorf("layer: %w", err))
}

func TestClassify(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name      string
		err       error
		kind      middleware.Kind
		retryable bool
		reason    string
	}{
		{"a connection reset deep in a url.Error is retried", wrapDeep(reset), middleware.KindFailed, true, "the connection was reset"},
		{"a bare ECONNRESET is retried", syscall.ECONNRESET, middleware.KindFailed, true, "the connection was reset"},
		{"a refused connection is retried", wrapDeep(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), middleware.KindFailed, true, "the connection was refused"},
		{"an unexpected EOF is retried", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), middleware.KindFailed, true, "the connection closed before the answer was complete"},
		{"an unknown foreign error is retried", errors.New("something odd"), middleware.KindFailed, true, ""},
		{"Transient is retried", middleware.Transient(errors.New("billing API busy")), middleware.KindFailed, true, ""},
		{"Transient wrapped twice is retried", fmt.Errorf("a: %w", fmt.Errorf("b: %w", middleware.Transient(errors.New("busy")))), middleware.KindFailed, true, ""},
		{"RetryAfter is retried", middleware.RetryAfter(errors.New("slow down"), time.Second), middleware.KindFailed, true, ""},
		{"a ToolError is not retried", middleware.NewToolError("invoice %s not found", "INV-9"), middleware.KindToolError, false, "invoice INV-9 not found"},
		{"a wrapped ToolError is not retried", wrapDeep(middleware.NewToolError("no such customer")), middleware.KindToolError, false, "no such customer"},
		{"a retryable ToolError is retried", middleware.RetryableToolError("ledger is closing, try later"), middleware.KindFailed, true, "ledger is closing, try later"},
		{"Transient around a ToolError is retried", middleware.Transient(middleware.NewToolError("busy")), middleware.KindFailed, true, "busy"},
		{"a Failure keeps its kind", fmt.Errorf("x: %w", &middleware.Failure{Kind: middleware.KindPanic}), middleware.KindPanic, false, ""},
		{"an approval pause is not retried", fmt.Errorf("x: %w", &approval.Required{Tool: "refund"}), middleware.KindApprovalRequired, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, retryable := middleware.Classify(tt.err)
			if kind != tt.kind || retryable != tt.retryable {
				t.Errorf("Classify = %q, %v; want %q, %v", kind, retryable, tt.kind, tt.retryable)
			}
			if got := middleware.Reason(tt.err); got != tt.reason {
				t.Errorf("Reason = %q; want %q", got, tt.reason)
			}
		})
	}
	if kind, retryable := middleware.Classify(nil); kind != "" || retryable {
		t.Errorf("Classify(nil) = %q, %v; want \"\", false", kind, retryable)
	}
}

func TestRetryAfterOf(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", middleware.RetryAfter(errors.New("429"), 3*time.Second))
	d, ok := middleware.RetryAfterOf(err)
	if !ok || d != 3*time.Second {
		t.Fatalf("RetryAfterOf = %v, %v; want 3s, true", d, ok)
	}
	if _, ok := middleware.RetryAfterOf(errors.New("plain")); ok {
		t.Fatal("RetryAfterOf found a wait in a plain error")
	}
	if d, _ := middleware.RetryAfterOf(middleware.RetryAfter(errors.New("x"), -time.Second)); d != 0 {
		t.Fatalf("a negative wait became %v; want 0", d)
	}
	if middleware.RetryAfter(nil, time.Second) != nil || middleware.Transient(nil) != nil {
		t.Fatal("marking a nil error must give nil")
	}
}
