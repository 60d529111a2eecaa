package test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// TestAnAlternativeOfASideEffectingToolIsCalledInARun: inside a scoped run,
// a fallback's alternative is part of its call, recorded beside it; it was
// once read as the continuation of an earlier call of unknown outcome, so
// the alternative of a tool without keys was never called (refused as
// "may have been applied") and that of a tool with keys was marked as
// maybe applied. (Found while building temporaltools.)
func TestAnAlternativeOfASideEffectingToolIsCalledInARun(t *testing.T) {
	for _, se := range []middleware.SideEffects{middleware.SideEffectsWithoutKey, middleware.SideEffectsWithKey} {
		t.Run(se.String(), func(t *testing.T) {
			var altCalls atomic.Int32
			primary := middleware.Func("queue_charge", "charges now", func(context.Context, string) (string, error) {
				return "", middleware.NewToolError("the charge service refuses this order")
			})
			alt := middleware.Func("queue_charge_later", "queues the charge", func(context.Context, string) (string, error) {
				altCalls.Add(1)
				return "queued", nil
			})
			tool := toolsafe.Wrap(primary, toolsafe.WithSideEffects(se), toolsafe.WithFallback(fallback.To(alt)))
			ctx := run.With(context.Background(), "run-1", run.NewMemoryLedger())
			res := tool.Run(ctx, `{"order":"A-1"}`)
			if res.Failure != nil {
				t.Fatalf("the call failed (%s): %s; want the alternative's answer", res.Failure.Kind, res.Observation())
			}
			if res.Output != "queued" || res.Fallback != "queue_charge_later" || altCalls.Load() != 1 {
				t.Fatalf("output %q from %q, the alternative called %d times; want \"queued\" from queue_charge_later, called once",
					res.Output, res.Fallback, altCalls.Load())
			}
		})
	}
}
