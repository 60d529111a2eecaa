package run_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// Regression (the loop guard's in-flight list leaks): when a full ledger
// dropped a read's new entry, the call stayed in the guard's list of calls
// in flight, so the memory of a run grew with every call. A scope keeps one
// position per tool and input, whatever the number of calls.
func TestTheLoopGuardKeepsNothingPerCall(t *testing.T) {
	search := toolsafe.Wrap(middleware.Func("search", "", func(context.Context, string) (string, error) {
		return "found", nil
	}), toolsafe.WithCallLimits(run.Limits{Identical: 5_000}))
	l := &run.MemoryLedger{MaxEntries: 1} // full: every new read's entry is dropped
	ctx := run.With(context.Background(), "full", l)
	for i := range 2_000 {
		if r := search.Run(ctx, `{"q":"vpn"}`); r.Status() != "ok" {
			t.Fatalf("call %d: %v", i+1, r.Kind())
		}
	}
	if n := run.Tracked(ctx); n != 1 {
		t.Errorf("the scope keeps %d positions after 2,000 identical calls; want 1", n)
	}
	if es, _ := l.Entries(ctx, "full"); len(es) != 1 {
		t.Errorf("%d entries; want the ledger's bound of 1", len(es))
	}
}

// BenchmarkScopedRun is one call of a tool with side effects in a run that
// already holds n entries: its cost does not grow with n.
func BenchmarkScopedRun(b *testing.B) {
	for _, n := range []int{1, 100, 1_000, 10_000} {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			charge := toolsafe.Wrap(middleware.Func("charge", "", func(context.Context, string) (string, error) {
				return "charged", nil
			}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
			l := &run.MemoryLedger{MaxEntries: n + 1} // the run stays at n entries, plus the call's
			ctx := run.With(context.Background(), "bench", l)
			for i := range n {
				if r := charge.Run(ctx, `{"order":"`+strconv.Itoa(i)+`"}`); r.Status() != "ok" {
					b.Fatal(r.Failure)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := charge.Call(ctx, `{"order":"x"}`); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
