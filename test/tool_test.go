package test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// New names every invalid option, and a Tool that Wrap made from invalid
// options answers every call with the configuration error (tool.go).
func TestInvalidOptions(t *testing.T) {
	echo := middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	_, err := toolsafe.New(echo,
		toolsafe.WithRetry(policy.Retry{MaxRetries: -1}),
		toolsafe.WithTimeout(time.Minute),
		toolsafe.WithDeadline(time.Second))
	if err == nil {
		t.Fatal("New accepted invalid options")
	}
	for _, want := range []string{`tool "echo"`, "max retries -1 is negative", "longer than the deadline"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = toolsafe.New(echo, toolsafe.WithRetry(policy.Retry{Backoff: policy.Backoff{Jitter: 2}}))
	if err == nil || !strings.Contains(err.Error(), "jitter 2 is outside [0, 1]") {
		t.Errorf("err = %v; want the jitter named", err)
	}
	if _, err := toolsafe.New(nil); err == nil || err.Error() != "toolsafe: the tool to wrap is nil: pass a tools.Tool" {
		t.Errorf("err = %v; want a nil tool named", err)
	}

	w := toolsafe.Wrap(echo, toolsafe.WithTimeout(-time.Second))
	if w.Err() == nil || w.Name() != "echo" {
		t.Fatalf("Wrap kept no error (%v) or lost the name %q", w.Err(), w.Name())
	}
	if _, err := w.Call(context.Background(), "hi"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("Call on a misconfigured tool = %v; want the configuration error", err)
	}
}

// Call's contract: the caller's own cancellation comes back as its error.
// Cancellation inside the retry's wait and inside an attempt is tested in
// packages policy and middleware.
func TestCancellation(t *testing.T) {
	t.Run("a caller's deadline is returned as its error, not as a failure for the model", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := toolsafe.Wrap(testkit.Stuck(release, nil), toolsafe.WithDeadline(time.Hour)).Call(ctx, "x")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want context.DeadlineExceeded", err)
		}
	})
}

// Regression (issue "exactly once under store faults", item 10): wrapping
// a *toolsafe.Tool again was accepted silently: with approval in both
// layers each call needed two grants, and with retries in both the outer
// layer reported ok for an inner failure. New refuses it with ErrWrapped
// (and every other problem), Wrap's tool answers every call with it, and
// a *Tool is still an alternative a gated tool's fallback puts behind its
// gate.
func TestWrappingAWrappedToolIsRefused(t *testing.T) {
	var calls atomic.Int32
	refund := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "refunded", nil
	})
	once := toolsafe.Wrap(refund, toolsafe.WithRetry(policy.Retry{MaxRetries: 1}))
	_, err := toolsafe.New(once, toolsafe.WithTimeout(-1))
	if !errors.Is(err, toolsafe.ErrWrapped) || !strings.Contains(err.Error(), `tool "refund"`) || !strings.Contains(err.Error(), "attempt timeout -1ns is negative") {
		t.Fatalf("New of a *Tool: %v; want ErrWrapped, naming the tool, with the other problem", err)
	}
	twice := toolsafe.Wrap(once)
	if out, err := twice.Call(context.Background(), "x"); !errors.Is(err, toolsafe.ErrWrapped) || !errors.Is(twice.Err(), toolsafe.ErrWrapped) || calls.Load() != 0 {
		t.Fatalf("a call of Wrap's tool: %q, %v after %d calls; want ErrWrapped, no call", out, err, calls.Load())
	}

	grants := approval.NewGrants()
	primary := middleware.Func("refund_fast", "refunds", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New("reset"))
	})
	gated := toolsafe.Wrap(primary, toolsafe.WithApproval(grants), toolsafe.WithFallback(fallback.To(once)))
	grants.Grant("refund_fast", "x")
	grants.Grant("refund", "x")
	if r := gated.Run(context.Background(), "x"); r.Status() != "ok" || r.Fallback != "refund" || calls.Load() != 1 {
		t.Fatalf("a *Tool alternative: %s, fallback %q after %d calls (%q); want ok from refund", r.Status(), r.Fallback, calls.Load(), r.Observation())
	}
}
