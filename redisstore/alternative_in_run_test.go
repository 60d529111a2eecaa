package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// TestAnAlternativeOfASideEffectingToolIsCalledInARun, on Redis: a
// fallback's alternative is recorded as part of its call; the begin script
// once answered it as not new, which the run ledger layer read as an
// earlier call of unknown outcome, so the alternative of a tool without
// keys was never called.
func TestAnAlternativeOfASideEffectingToolIsCalledInARun(t *testing.T) {
	l := newReplicas(t, redisAddr, 1)[0].store.Ledger()
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
			res := tool.Run(run.With(background, "run-alt-"+se.String(), l), `{"order":"A-1"}`)
			if res.Failure != nil || res.Output != "queued" || res.Fallback != "queue_charge_later" || altCalls.Load() != 1 {
				t.Fatalf("%v %q from %q, the alternative called %d times; want \"queued\" from queue_charge_later, called once",
					res.Kind(), res.Observation(), res.Fallback, altCalls.Load())
			}
		})
	}
}
