package approval_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
)

// The gate returns when its context ends even if the approver ignores it,
// and remembers that it was waiting for approval.
func TestGateReturnsWhenCtxEndsWhileApproverIgnoresIt(t *testing.T) {
	var ran atomic.Int32
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { ran.Add(1); return "done", nil })
	asked, release, decided := make(chan struct{}), make(chan struct{}), make(chan struct{})
	prompt := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		defer close(decided)
		close(asked)
		<-release
		return approval.Approved, nil
	})
	ctx, _ := call.Begin(context.Background(), "refund", "", "A-1", nil)
	waiting := lastWaiting(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := approval.Gate(prompt, approval.ApproveCall)(tool).Call(ctx, "A-1")
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
	if w := waiting(); w != call.WaitingForApproval {
		t.Errorf("the call was last waiting for %q; want approval: the gate was still waiting", w)
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
	a := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		stack = string(debug.Stack())
		return approval.Approved, nil
	})
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	ctx, _ := call.Begin(context.Background(), "refund", "", "A-1", nil)
	waiting := lastWaiting(ctx)
	if out, err := approval.Gate(a, approval.ApproveCall)(tool).Call(ctx, "A-1"); out != "done" || err != nil {
		t.Fatalf("Call = %q, %v; want done", out, err)
	}
	if !strings.Contains(stack, "TestGateDecidesOnTheCallersGoroutineWhenCtxCannotEnd") {
		t.Errorf("Decide ran on another goroutine:\n%s", stack)
	}
	if w := waiting(); w != call.NotWaiting {
		t.Errorf("the call is still waiting for %q after the approver answered", w)
	}
}

// A panic in Decide is the approver failing: the call pauses with Err set.
func TestGateRecoversApproverPanic(t *testing.T) {
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	boom := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) { panic("boom") })
	for _, ctx := range []context.Context{context.Background(), t.Context()} {
		ctx, _ := call.Begin(ctx, "refund", "", "A-1", slog.New(slog.DiscardHandler))
		_, err := approval.Gate(boom, approval.ApproveEachAttempt)(tool).Call(ctx, "A-1")
		var ar *approval.Required
		if !errors.As(err, &ar) || ar.Err == nil || ar.Err.Error() != "the approver panicked: boom" {
			t.Errorf("Call returned %v; want a pause whose Err is the panic", err)
		}
	}
}

// A call whose context has already ended asks no approver.
func TestGateAsksNobodyForACancelledCall(t *testing.T) {
	var asked atomic.Int32
	a := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		asked.Add(1)
		return approval.Approved, nil
	})
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := approval.Gate(a, approval.ApproveCall)(tool).Call(ctx, "A-1"); !errors.Is(err, context.Canceled) || asked.Load() != 0 {
		t.Errorf("Call returned %v after asking %d times; want context.Canceled, never asked", err, asked.Load())
	}
}

// lastWaiting observes the call in ctx and returns what it was last
// waiting for, as the Waiting events said.
func lastWaiting(ctx context.Context) func() string {
	var mu sync.Mutex
	last := call.NotWaiting
	call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
		if w, ok := e.(call.Waiting); ok {
			mu.Lock()
			last = w.For
			mu.Unlock()
		}
	}))
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// An approver that ignores its context cannot pile up goroutines: past
// DefaultMaxAbandoned decisions still running after their calls ended, the
// gate fails closed at once without asking it again.
func TestAStuckApproverIsNotAskedWithoutBound(t *testing.T) {
	release := make(chan struct{})
	var asked atomic.Int32
	stuck := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		asked.Add(1)
		<-release // ignores its context
		return approval.Approved, nil
	})
	var ran atomic.Int32
	gated := approval.Gate(stuck, approval.ApproveCall)(middleware.Func("refund", "", func(context.Context, string) (string, error) {
		ran.Add(1)
		return "done", nil
	}))
	for range layer.DefaultMaxAbandoned + 10 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		_, err := gated.Call(ctx, "A-1")
		cancel()
		var ar *approval.Required
		if err == nil || (!errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ar)) {
			t.Fatalf("Call = %v; want the deadline or a pause", err)
		}
	}
	if n := asked.Load(); n != layer.DefaultMaxAbandoned {
		t.Errorf("the approver was asked %d times; want %d, then the gate fails closed", n, layer.DefaultMaxAbandoned)
	}
	close(release)
	if ran.Load() != 0 {
		t.Errorf("the tool ran %d times; want 0", ran.Load())
	}
}

// An approver that ignores its context (a synchronous prompt to a person)
// cannot hold the call past its deadline, and its late answer is dropped.
func TestApproverNotBoundedByDeadline(t *testing.T) {
	var ran atomic.Int32
	release, decided := make(chan struct{}), make(chan struct{})
	prompt := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		defer close(decided)
		<-release
		return approval.Approved, nil // too late
	})
	w := toolsafe.Wrap(testkit.Refund(&ran), toolsafe.WithApproval(prompt),
		toolsafe.WithDeadline(100*time.Millisecond), toolsafe.WithTimeout(50*time.Millisecond))
	r := testkit.Within(t, 10*time.Second, w, context.Background(), "A-1")
	close(release)
	<-decided
	if f := r.Failure; f == nil || f.Kind != middleware.KindTimeout || f.Timeout != 100*time.Millisecond || f.Attempts != 0 ||
		f.SideEffect != middleware.SideEffectNone || f.Retryable {
		t.Fatalf("got %+v; want a tool-timeout at the 100ms deadline, no attempt, no side effect", r)
	}
	if ran.Load() != 0 {
		t.Errorf("the tool ran %d times; want 0: the approval came after the call ended", ran.Load())
	}
}

// A panicking approver fails closed: the call pauses with the approver's
// failure as ApprovalRequired.Err, the tool never runs, the panic and its
// type and stack are logged at ERROR (its value may hold a secret: only at
// DEBUG).
func TestApproverPanicFailsClosed(t *testing.T) {
	for name, ctx := range map[string]context.Context{
		"without a deadline": context.Background(),
		"with a deadline":    nil,
	} {
		t.Run(name, func(t *testing.T) {
			var ran atomic.Int32
			var logs bytes.Buffer
			opts := []toolsafe.Option{
				toolsafe.WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
					panic("approver bug")
				})),
				toolsafe.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			}
			if ctx == nil {
				ctx = context.Background()
				opts = append(opts, toolsafe.WithDeadline(time.Minute))
			}
			w := toolsafe.Wrap(testkit.Refund(&ran), opts...)
			_, err := w.Call(ctx, "A-1")
			var ar *approval.Required
			if !errors.As(err, &ar) || ar.Tool != "refund" || ar.Input != "A-1" || ar.Err == nil ||
				ar.Err.Error() != "the approver panicked: approver bug" || ar.Reason != "the approver could not decide" {
				t.Fatalf("Call returned %v (%+v); want a pause whose Err is the approver's panic", err, ar)
			}
			if ran.Load() != 0 {
				t.Errorf("the tool ran %d times; want 0", ran.Load())
			}
			var errorLine, debugLine string
			for _, l := range strings.Split(logs.String(), "\n") {
				switch {
				case strings.Contains(l, "level=ERROR"):
					errorLine = l
				case strings.Contains(l, "level=DEBUG") && strings.Contains(l, "panicked: the value"):
					debugLine = l
				}
			}
			if !strings.Contains(errorLine, `msg="toolsafe: approver panicked"`) || !strings.Contains(errorLine, "panic_type=string") ||
				!strings.Contains(errorLine, "runtime/debug.Stack") || strings.Contains(errorLine, "approver bug") {
				t.Errorf("ERROR line %q; want the panic's type and stack, not its value", errorLine)
			}
			if !strings.Contains(debugLine, `panic="approver bug"`) {
				t.Errorf("DEBUG line %q; want the panic's value", debugLine)
			}
		})
	}
}

// A gated call whose context has already ended asks no approver and uses up
// no grant.
func TestCancelledCallUsesNoGrant(t *testing.T) {
	var ran atomic.Int32
	g := approval.NewGrants()
	g.Grant("refund", "A-1")
	w := toolsafe.Wrap(testkit.Refund(&ran), toolsafe.WithApproval(g))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Call(ctx, "A-1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call returned %v; want context.Canceled", err)
	}
	if p := g.Pending(); len(p) != 0 {
		t.Errorf("pending %+v; want none: the cancelled call asked nobody", p)
	}
	if out, err := w.Call(context.Background(), "A-1"); out != "refunded A-1" || err != nil || ran.Load() != 1 {
		t.Errorf("Call = %q, %v after %d runs; want the grant still there: refunded A-1, once", out, err, ran.Load())
	}
}
