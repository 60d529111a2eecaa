package middleware_test

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestMayHaveApplied(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a refused connection never sent the request", wrapDeep(dial), false},
		{"a name that did not resolve never sent it", wrapDeep(&net.OpError{Op: "dial", Err: &net.DNSError{Name: "billing"}}), false},
		{"503 says the upstream did not act", &middleware.HTTPError{StatusCode: 503}, false},
		{"429 says the upstream did not act", middleware.Transient(&middleware.HTTPError{StatusCode: 429}), false},
		{"a Retry-After says the upstream did not act", middleware.RetryAfter(errors.New("busy"), time.Second), false},
		{"a tool error knows its outcome", middleware.NewToolError("order closed"), false},
		{"an approval pause ran nothing", &approval.Required{Tool: "refund"}, false},
		{"an open circuit ran nothing", &middleware.Failure{Kind: middleware.KindCircuitOpen}, false},
		{"a reset after the request was sent may have landed", wrapDeep(reset), true},
		{"an unexpected EOF may have landed", io.ErrUnexpectedEOF, true},
		{"500 may have landed", &middleware.HTTPError{StatusCode: 500}, true},
		{"504 may have landed", middleware.Transient(&middleware.HTTPError{StatusCode: 504}), true},
		{"an attempt timeout may have landed", &middleware.Failure{Kind: middleware.KindTimeout}, true},
		{"a panic may have landed", &middleware.Failure{Kind: middleware.KindPanic}, true},
		{"an unknown error may have landed", errors.New("odd"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := middleware.MayHaveApplied(tt.err); got != tt.want {
				t.Errorf("MayHaveApplied = %v; want %v", got, tt.want)
			}
		})
	}
}
