package temporaltools

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestARefundWithoutKeysIsNotMadeAgainWhenTemporalRetriesAnAttemptThatDidNotAnswer(t *testing.T) {
	// The refund's first attempt applies it, then hangs past the
	// activity's StartToCloseTimeout (a worker that hung or died after the
	// request left): Temporal retries the activity. The tool sends no key,
	// so a second request would refund twice.
	var applied atomic.Int32
	refund := mustNew(t, middleware.Func("refund", "Refunds an order.", func(ctx context.Context, _ string) (string, error) {
		if applied.Add(1) == 1 {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return `{"refund":"R-2"}`, nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
	opts := fast(3)
	opts.StartToCloseTimeout = time.Second
	res := runWorkflow(t, calls(RunOptions{Activity: opts}, call{"refund", `{"order":"A-1"}`, "c1"}), refund)
	if n := applied.Load(); n != 1 {
		t.Fatalf("the refund was sent %d times, want 1: the first may have been applied and it sends no key", n)
	}
	if r := res[0]; r.Kind == "" || !r.SideEffectUnknown || !strings.Contains(r.Observation, "may have been applied") {
		t.Fatalf("the model is told %q (kind %q, side effect unknown %v)", r.Observation, r.Kind, r.SideEffectUnknown)
	}
}
