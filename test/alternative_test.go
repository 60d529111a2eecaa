package test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
)

// How toolsafe runs a plain tools.Tool alternative (tool.go, alternative):
// through its own layers, with the primary's attempt timeout, deadline,
// logger and tracing. (The fallback layer's own rules are tested in package
// fallback.)

// A plain alternative runs like an attempt of the primary: bounded by the
// primary's attempt timeout, else by its deadline, else by the caller's
// context, even when it ignores its context.
func TestDeadlineCoversPlainFallback(t *testing.T) {
	t.Run("the primary's attempt timeout bounds it", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls),
			toolsafe.WithDeadline(time.Second), toolsafe.WithTimeout(50*time.Millisecond),
			toolsafe.WithFallback(fallback.To(testkit.Ignoring(t, "invoice_cache"))))
		r := testkit.Within(t, 10*time.Second, w, context.Background(), "INV-1")
		if r.Fallback != "invoice_cache" || r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
			t.Fatalf("got %+v; want fetch_invoice's tool-failed after routing to invoice_cache", r)
		}
		ff := r.Failure.FallbackFailure
		if ff == nil || ff.Kind != middleware.KindTimeout || ff.Tool != "invoice_cache" || ff.Timeout != 50*time.Millisecond || ff.Attempts != 1 {
			t.Fatalf("fallback failure %+v; want invoice_cache's tool-timeout after 50ms, 1 attempt", ff)
		}
		want := "fetch_invoice failed (the connection was refused) after 1 attempt. It may work if fetch_invoice is called again later." +
			" The fallback tool invoice_cache was tried instead and failed too: invoice_cache did not answer within 50ms after 1 attempt. It may work if invoice_cache is called again later."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})

	t.Run("without an attempt timeout, the primary's deadline bounds it", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls), toolsafe.WithDeadline(80*time.Millisecond),
			toolsafe.WithFallback(fallback.To(testkit.Ignoring(t, "invoice_cache"))))
		r := testkit.Within(t, 10*time.Second, w, context.Background(), "INV-1")
		ff := r.Failure.FallbackFailure
		if ff == nil || ff.Kind != middleware.KindTimeout || ff.Timeout != 80*time.Millisecond || ff.Retryable {
			t.Fatalf("fallback failure %+v; want invoice_cache's tool-timeout at its 80ms deadline, not retryable", ff)
		}
		want := "fetch_invoice failed (the connection was refused) after 1 attempt. It may work if fetch_invoice is called again later." +
			" The fallback tool invoice_cache was tried instead and failed too: invoice_cache did not answer within 80ms after 1 attempt. Do not call invoice_cache again with the same input for this request; tell the user it is unavailable or use another tool."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})

	t.Run("with neither, the caller's context bounds it", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls), toolsafe.WithFallback(fallback.To(testkit.Ignoring(t, "invoice_cache"))))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := w.Call(ctx, "INV-1"); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Call returned %v; want the caller's context.DeadlineExceeded", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Call did not return after the caller's context ended")
		}
	})

	t.Run("a *toolsafe.Tool alternative keeps its own limits", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		alt := toolsafe.Wrap(testkit.Ignoring(t, "invoice_cache"), toolsafe.WithTimeout(30*time.Millisecond))
		w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls), toolsafe.WithTimeout(time.Second), toolsafe.WithFallback(fallback.To(alt)))
		r := testkit.Within(t, 10*time.Second, w, context.Background(), "INV-1")
		if ff := r.Failure.FallbackFailure; ff == nil || ff.Kind != middleware.KindTimeout || ff.Timeout != 30*time.Millisecond {
			t.Fatalf("fallback failure %+v; want invoice_cache's own 30ms tool-timeout", ff)
		}
	})

	t.Run("it is traced as a call of its own with the primary's hook", func(t *testing.T) {
		t.Parallel()
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		var calls atomic.Int32
		alt := middleware.Func("invoice_cache", "", func(context.Context, string) (string, error) { return "cached", nil })
		w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls), toolsafe.WithTimeout(time.Second),
			toolsafe.WithFallback(fallback.To(alt)), toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))))
		if r := w.Run(context.Background(), "INV-1"); r.Status() != "ok" || r.Output != "cached" || r.Fallback != "invoice_cache" {
			t.Fatalf("got %+v; want ok from invoice_cache", r)
		}
		var names []string
		for _, s := range spans.Ended() {
			names = append(names, s.Name())
		}
		slices.Sort(names)
		if want := []string{"attempt 1", "attempt 1", "execute_tool fetch_invoice", "execute_tool invoice_cache"}; !slices.Equal(names, want) {
			t.Errorf("spans %v; want %v", names, want)
		}
	})
}

// A plain alternative that panics is recovered like an attempt of the
// primary: tool-panic, and the process goes on.
func TestPlainFallbackPanicIsRecovered(t *testing.T) {
	var calls atomic.Int32
	alt := middleware.Func("invoice_cache", "buggy", func(context.Context, string) (string, error) { panic("bug") })
	w := toolsafe.Wrap(testkit.Refusing("fetch_invoice", &calls), toolsafe.WithFallback(fallback.To(alt)), toolsafe.WithLogger(testkit.Quiet()))
	r := testkit.Within(t, 10*time.Second, w, context.Background(), "INV-1")
	if ff := r.Failure.FallbackFailure; ff == nil || ff.Kind != middleware.KindPanic || ff.Tool != "invoice_cache" {
		t.Fatalf("fallback failure %+v; want invoice_cache's tool-panic", ff)
	}
	want := "fetch_invoice failed (the connection was refused) after 1 attempt. It may work if fetch_invoice is called again later." +
		" The fallback tool invoice_cache was tried instead and failed too: invoice_cache failed internally (a bug in the tool, not in your input). Do not call it again for this request; go on without it."
	if got := r.Observation(); got != want {
		t.Errorf("observation\n got %q\nwant %q", got, want)
	}
}
