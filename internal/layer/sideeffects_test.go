package layer_test

import (
	"context"
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

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestGuardSideEffects(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	failing := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) { return "", reset })
	for _, tt := range []struct {
		s         middleware.SideEffects
		retryable bool
		effect    middleware.SideEffect
	}{
		{middleware.NoSideEffects, true, middleware.SideEffectNone},
		{middleware.SideEffectsWithKey, true, middleware.SideEffectUnknown},
		{middleware.SideEffectsWithoutKey, false, middleware.SideEffectUnknown},
	} {
		t.Run(tt.s.String(), func(t *testing.T) {
			ctx, _ := call.Begin(context.Background(), "refund", "", "A-1", nil)
			// The attempt timeout begins the attempt, as inside toolsafe.
			_, err := layer.GuardSideEffects(tt.s)(layer.AttemptTimeout(0)(failing)).Call(ctx, "A-1")
			_, retryable := middleware.Classify(err)
			f := call.FailureOf(ctx, err)
			if retryable != tt.retryable || f.SideEffect != tt.effect {
				t.Errorf("retryable %v, side effect %v; want %v, %v", retryable, f.SideEffect, tt.retryable, tt.effect)
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("the cause was lost: %v", err)
			}
		})
	}
}

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
			if got := layer.MayHaveApplied(tt.err); got != tt.want {
				t.Errorf("MayHaveApplied = %v; want %v", got, tt.want)
			}
		})
	}
}

// wrapDeep wraps err the way real code does: a *url.Error around a
// *net.OpError around an *os.SyscallError, then fmt.Errorf and errors.Join.
func wrapDeep(err error) error {
	err = &url.Error{Op: "Get", URL: "http://127.0.0.1/invoice", Err: err}
	err = fmt.Errorf("fetch invoice: %w", err)
	return errors.Join(errors.New("cleanup: nothing"), fmt.Errorf("layer: %w", err))
}

// Issue 27: mcptools answered an MCP server's internal error (-32603) as
// Transient(ToolError), and the guard read any ToolError as proof that
// nothing was applied, so a tool with side effects and no key that acted,
// then failed, was sent again. A ToolError proves it only as a semantic
// verdict (kind tool-error); marked, it is a message, and its cause decides.
func TestAToolErrorMarkedTransientIsNoProofNothingWasApplied(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"a transient tool error with no cause", middleware.Transient(middleware.NewToolError("its MCP server failed to handle the call")), true},
		{"a retryable tool error", middleware.RetryableToolError("billing is busy; try later"), true},
		{"a permanent tool error over a closed connection", middleware.Permanent(middleware.NewToolError("its MCP session is closed").WithCause(io.ErrUnexpectedEOF)), true},
		{"a transient tool error over a reset", middleware.Transient(middleware.NewToolError("the connection failed").WithCause(reset)), true},
		{"a transient tool error over a refused dial", middleware.Transient(middleware.NewToolError("the connection failed").WithCause(wrapDeep(dial))), false},
		{"a transient tool error over a 503", middleware.Transient(middleware.NewToolError("busy").WithCause(&middleware.HTTPError{StatusCode: 503})), false},
		{"a semantic tool error", middleware.NewToolError("order A-1 is closed"), false},
		{"a semantic tool error over a reset is still the tool's verdict", middleware.NewToolError("order A-1 is closed").WithCause(reset), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := layer.MayHaveApplied(tt.err); got != tt.want {
				t.Errorf("MayHaveApplied = %v; want %v", got, tt.want)
			}
		})
	}
}

// The guard ends a call of a tool with side effects and no key at the
// first transient ToolError: one attempt, the outcome unknown.
func TestATransientToolErrorEndsACallWithoutAKey(t *testing.T) {
	var attempts int
	tool := middleware.Func("charge", "charges", func(context.Context, string) (string, error) {
		attempts++
		return "", middleware.Transient(middleware.NewToolError("its MCP server failed to handle the call"))
	})
	ctx, _ := call.Begin(context.Background(), "charge", "", "{}", nil)
	_, err := layer.GuardSideEffects(middleware.SideEffectsWithoutKey)(layer.AttemptTimeout(0)(tool)).Call(ctx, "{}")
	if _, retryable := middleware.Classify(err); retryable || attempts != 1 {
		t.Fatalf("retryable %v after %d attempts; want not retryable after 1", retryable, attempts)
	}
	if f := call.FailureOf(ctx, err); f.SideEffect != middleware.SideEffectUnknown {
		t.Errorf("side effect %v; want unknown", f.SideEffect)
	}
}

// NotApplied is the one mark a tool gives to say the upstream never acted:
// an MCP call written to a session already closed, a 404 for a session the
// server forgot. It is retried even without a key, and it proves it
// through Permanent and any wrapping.
func TestNotAppliedProvesNothingWasApplied(t *testing.T) {
	closed := middleware.NewToolError("its MCP session is closed").WithCause(io.ErrClosedPipe)
	for _, err := range []error{
		middleware.NotApplied(closed),
		middleware.Permanent(middleware.NotApplied(closed)),
		wrapDeep(middleware.NotApplied(errors.New("session not found"))),
	} {
		if layer.MayHaveApplied(err) {
			t.Errorf("MayHaveApplied(%v) = true; want false", err)
		}
	}
	if _, retryable := middleware.Classify(middleware.NotApplied(closed)); !retryable {
		t.Error("NotApplied is not retryable")
	}
	if kind, retryable := middleware.Classify(middleware.Permanent(middleware.NotApplied(closed))); kind != middleware.KindFailed || retryable {
		t.Errorf("Permanent(NotApplied) is %s, retryable %v; want tool-failed, not retryable", kind, retryable)
	}
}
