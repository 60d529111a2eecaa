package middleware_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// The gate returns when its context ends even if the approver ignores it,
// and remembers that it was waiting for approval.
func TestGateReturnsWhenCtxEndsWhileApproverIgnoresIt(t *testing.T) {
	var ran atomic.Int32
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { ran.Add(1); return "done", nil })
	asked, release, decided := make(chan struct{}), make(chan struct{}), make(chan struct{})
	prompt := middleware.ApproverFunc(func(context.Context, middleware.CallInfo) (middleware.Decision, error) {
		defer close(decided)
		close(asked)
		<-release
		return middleware.Approved, nil
	})
	call := middleware.NewCall("refund", "")
	ctx, cancel := context.WithCancel(middleware.WithCall(context.Background(), call))
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := middleware.Gate(prompt, middleware.ApproveCall)(tool).Call(ctx, "A-1")
		errc <- err
	}()
	<-asked
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Call returned %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gate did not return when its context ended")
	}
	if !call.AwaitingApproval() {
		t.Error("AwaitingApproval is false; want true: the gate was still waiting")
	}
	close(release)
	<-decided
	if ran.Load() != 0 {
		t.Errorf("the tool ran %d times; want 0: the approval came after the call ended", ran.Load())
	}
}

// When its context can never end, the gate asks the approver on the caller's
// goroutine: no goroutine of its own.
func TestGateDecidesOnTheCallersGoroutineWhenCtxCannotEnd(t *testing.T) {
	var stack string
	a := middleware.ApproverFunc(func(context.Context, middleware.CallInfo) (middleware.Decision, error) {
		stack = string(debug.Stack())
		return middleware.Approved, nil
	})
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	call := middleware.NewCall("refund", "")
	if out, err := middleware.Gate(a, middleware.ApproveCall)(tool).Call(middleware.WithCall(context.Background(), call), "A-1"); out != "done" || err != nil {
		t.Fatalf("Call = %q, %v; want done", out, err)
	}
	if !strings.Contains(stack, "TestGateDecidesOnTheCallersGoroutineWhenCtxCannotEnd") {
		t.Errorf("Decide ran on another goroutine:\n%s", stack)
	}
	if call.AwaitingApproval() {
		t.Error("AwaitingApproval is true after the approver answered")
	}
}

// A panic in Decide is the approver failing: the call pauses with Err set.
func TestGateRecoversApproverPanic(t *testing.T) {
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	boom := middleware.ApproverFunc(func(context.Context, middleware.CallInfo) (middleware.Decision, error) { panic("boom") })
	call := middleware.NewCall("refund", "")
	call.SetLogger(slog.New(slog.DiscardHandler))
	for _, ctx := range []context.Context{context.Background(), t.Context()} {
		_, err := middleware.Gate(boom, middleware.ApproveEachAttempt)(tool).Call(middleware.WithCall(ctx, call), "A-1")
		var ar *middleware.ApprovalRequired
		if !errors.As(err, &ar) || ar.Err == nil || ar.Err.Error() != "the approver panicked: boom" {
			t.Errorf("Call returned %v; want a pause whose Err is the panic", err)
		}
	}
}

// A call whose context has already ended asks no approver.
func TestGateAsksNobodyForACancelledCall(t *testing.T) {
	var asked atomic.Int32
	a := middleware.ApproverFunc(func(context.Context, middleware.CallInfo) (middleware.Decision, error) {
		asked.Add(1)
		return middleware.Approved, nil
	})
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := middleware.Gate(a, middleware.ApproveCall)(tool).Call(ctx, "A-1"); !errors.Is(err, context.Canceled) || asked.Load() != 0 {
		t.Errorf("Call returned %v after asking %d times; want context.Canceled, never asked", err, asked.Load())
	}
}
