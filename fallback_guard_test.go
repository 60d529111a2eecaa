package toolsafe_test

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
	"github.com/toolsafe/toolsafe/internal/fixture"
	"github.com/toolsafe/toolsafe/internal/outcome"
	"github.com/toolsafe/toolsafe/internal/stub"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
)

// A plain alternative runs like an attempt of the primary: bounded by the
// primary's attempt timeout, else by its deadline, else by the caller's
// context, even when it ignores its context.
func TestDeadlineCoversPlainFallback(t *testing.T) {
	t.Run("the primary's attempt timeout bounds it", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls),
			toolsafe.WithDeadline(time.Second), toolsafe.WithTimeout(50*time.Millisecond),
			toolsafe.WithFallback(fallback.To(stub.Ignoring(t, "invoice_cache"))))
		r := outcome.Within(t, 10*time.Second, w, context.Background(), "INV-1")
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
		w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls), toolsafe.WithDeadline(80*time.Millisecond),
			toolsafe.WithFallback(fallback.To(stub.Ignoring(t, "invoice_cache"))))
		r := outcome.Within(t, 10*time.Second, w, context.Background(), "INV-1")
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
		w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls), toolsafe.WithFallback(fallback.To(stub.Ignoring(t, "invoice_cache"))))
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
		alt := toolsafe.Wrap(stub.Ignoring(t, "invoice_cache"), toolsafe.WithTimeout(30*time.Millisecond))
		w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls), toolsafe.WithTimeout(time.Second), toolsafe.WithFallback(fallback.To(alt)))
		r := outcome.Within(t, 10*time.Second, w, context.Background(), "INV-1")
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
		w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls), toolsafe.WithTimeout(time.Second),
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
	w := toolsafe.Wrap(stub.Refusing("fetch_invoice", &calls), toolsafe.WithFallback(fallback.To(alt)), toolsafe.WithLogger(fixture.Quiet()))
	r := outcome.Within(t, 10*time.Second, w, context.Background(), "INV-1")
	if ff := r.Failure.FallbackFailure; ff == nil || ff.Kind != middleware.KindPanic || ff.Tool != "invoice_cache" {
		t.Fatalf("fallback failure %+v; want invoice_cache's tool-panic", ff)
	}
	want := "fetch_invoice failed (the connection was refused) after 1 attempt. It may work if fetch_invoice is called again later." +
		" The fallback tool invoice_cache was tried instead and failed too: invoice_cache failed internally (a bug in the tool, not in your input). Do not call it again for this request; go on without it."
	if got := r.Observation(); got != want {
		t.Errorf("observation\n got %q\nwant %q", got, want)
	}
}

// A fallback cycle built in code ends: the fallback layer does not route to
// a tool already on the call's fallback path.
func TestFallbackCycleInCode(t *testing.T) {
	t.Run("a → b → a: b does not fall back to a", func(t *testing.T) {
		t.Parallel()
		var lookupCalls, searchCalls, proxyCalls atomic.Int32
		var lookup *toolsafe.Tool
		// A plain tool that stands for lookup closes the cycle.
		toLookup := middleware.Func("lookup", "", func(ctx context.Context, in string) (string, error) {
			proxyCalls.Add(1)
			return lookup.Call(ctx, in)
		})
		search := toolsafe.Wrap(stub.Refusing("search", &searchCalls), toolsafe.WithDeadline(time.Second),
			toolsafe.WithFallback(fallback.To(toLookup)), toolsafe.WithLogger(fixture.Quiet()))
		lookup = toolsafe.Wrap(stub.Refusing("lookup", &lookupCalls), toolsafe.WithDeadline(time.Second),
			toolsafe.WithFallback(fallback.To(search)), toolsafe.WithLogger(fixture.Quiet()))

		r := outcome.Within(t, 10*time.Second, lookup, context.Background(), "T-7")
		if lookupCalls.Load() != 1 || searchCalls.Load() != 1 || proxyCalls.Load() != 0 {
			t.Fatalf("lookup called %d times, search %d, the proxy of lookup %d; want 1, 1, 0",
				lookupCalls.Load(), searchCalls.Load(), proxyCalls.Load())
		}
		if r.Fallback != "search" || r.Failure == nil || r.Failure.FallbackFailure == nil || r.Failure.FallbackFailure.FallbackSkipped != "lookup" {
			t.Fatalf("got %+v; want lookup's failure, then search's, which did not fall back to lookup", r)
		}
		want := "lookup failed (the connection was refused) after 1 attempt. It may work if lookup is called again later." +
			" The fallback tool search was tried instead and failed too: search failed (the connection was refused) after 1 attempt. It may work if search is called again later." +
			" Its fallback tool lookup was not called: it is already being tried for this request (the tools fall back to each other in a cycle)."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})

	t.Run("a → b → proxy of a → a: a does not fall back to b again", func(t *testing.T) {
		t.Parallel()
		var lookupCalls, searchCalls, proxyCalls atomic.Int32
		var lookup *toolsafe.Tool
		proxy := middleware.Func("lookup_proxy", "", func(ctx context.Context, in string) (string, error) {
			proxyCalls.Add(1)
			return lookup.Call(ctx, in)
		})
		search := toolsafe.Wrap(stub.Refusing("search", &searchCalls), toolsafe.WithFallback(fallback.To(proxy)), toolsafe.WithLogger(fixture.Quiet()))
		lookup = toolsafe.Wrap(stub.Refusing("lookup", &lookupCalls), toolsafe.WithFallback(fallback.To(search)), toolsafe.WithLogger(fixture.Quiet()))

		r := outcome.Within(t, 10*time.Second, lookup, context.Background(), "T-7")
		if lookupCalls.Load() != 2 || searchCalls.Load() != 1 || proxyCalls.Load() != 1 {
			t.Fatalf("lookup called %d times, search %d, the proxy %d; want 2, 1, 1",
				lookupCalls.Load(), searchCalls.Load(), proxyCalls.Load())
		}
		// The proxy answers with what lookup.Call gave it: lookup's message.
		want := "(lookup could not answer, so its fallback tool search did; this answer may be less fresh or less complete) " +
			"lookup failed (the connection was refused) after 1 attempt. It may work if lookup is called again later." +
			" Its fallback tool search was not called: it is already being tried for this request (the tools fall back to each other in a cycle)."
		if got := r.Observation(); got != want {
			t.Errorf("observation\n got %q\nwant %q", got, want)
		}
	})

	t.Run("a fallback to a tool of the same name is not taken", func(t *testing.T) {
		t.Parallel()
		var lookupCalls, altCalls atomic.Int32
		w := toolsafe.Wrap(stub.Refusing("lookup", &lookupCalls), toolsafe.WithFallback(fallback.To(stub.Refusing("lookup", &altCalls))),
			toolsafe.WithLogger(fixture.Quiet()))
		r := w.Run(context.Background(), "T-7")
		if lookupCalls.Load() != 1 || altCalls.Load() != 0 || r.Fallback != "" || r.Failure == nil || r.Failure.FallbackSkipped != "lookup" {
			t.Fatalf("got %+v, lookup called %d times, its namesake %d; want lookup's failure, the namesake not called",
				r, lookupCalls.Load(), altCalls.Load())
		}
	})
}
