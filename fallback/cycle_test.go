package fallback_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
)

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
		search := toolsafe.Wrap(testkit.Refusing("search", &searchCalls), toolsafe.WithDeadline(time.Second),
			toolsafe.WithFallback(fallback.To(toLookup)), toolsafe.WithLogger(testkit.Quiet()))
		lookup = toolsafe.Wrap(testkit.Refusing("lookup", &lookupCalls), toolsafe.WithDeadline(time.Second),
			toolsafe.WithFallback(fallback.To(search)), toolsafe.WithLogger(testkit.Quiet()))

		r := testkit.Within(t, 10*time.Second, lookup, context.Background(), "T-7")
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
		search := toolsafe.Wrap(testkit.Refusing("search", &searchCalls), toolsafe.WithFallback(fallback.To(proxy)), toolsafe.WithLogger(testkit.Quiet()))
		lookup = toolsafe.Wrap(testkit.Refusing("lookup", &lookupCalls), toolsafe.WithFallback(fallback.To(search)), toolsafe.WithLogger(testkit.Quiet()))

		r := testkit.Within(t, 10*time.Second, lookup, context.Background(), "T-7")
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
		w := toolsafe.Wrap(testkit.Refusing("lookup", &lookupCalls), toolsafe.WithFallback(fallback.To(testkit.Refusing("lookup", &altCalls))),
			toolsafe.WithLogger(testkit.Quiet()))
		r := w.Run(context.Background(), "T-7")
		if lookupCalls.Load() != 1 || altCalls.Load() != 0 || r.Fallback != "" || r.Failure == nil || r.Failure.FallbackSkipped != "lookup" {
			t.Fatalf("got %+v, lookup called %d times, its namesake %d; want lookup's failure, the namesake not called",
				r, lookupCalls.Load(), altCalls.Load())
		}
	})
}
