package layer

import (
	"context"
	"sync/atomic"
)

// hold is one release waiting for an attempt to end for real. Its count
// starts at 1 for the layer that holds it; AttemptTimeout adds 1 while an
// abandoned tool still runs. Whoever brings it to 0 runs release.
type hold struct {
	n       atomic.Int32
	release func()
}

func (h *hold) add() { h.n.Add(1) }

func (h *hold) drop() {
	if h.n.Add(-1) == 0 {
		h.release()
	}
}

type holdsKey struct{}

// Hold makes release wait until the tool called with the returned context
// has really returned, even when AttemptTimeout gave control back earlier and
// left the tool running in the background. It is how a layer outside the
// attempt timeout keeps a resource for exactly as long as the tool uses it:
// the bulkhead (policy.Bulkhead) returns its permit through it, so an
// abandoned attempt still counts against the limit of the upstream it is
// still talking to; the circuit breaker keeps a half-open probe's permit the
// same way.
//
// Call the returned done once, after next.Call has returned; a deferred call
// also covers a panic. release runs exactly once: in done when no attempt
// was abandoned, else on the abandoned attempt's goroutine when its tool
// returns. A nil release is allowed and does nothing. Holds nest: every hold
// in the context waits.
func Hold(ctx context.Context, release func()) (context.Context, func()) {
	if release == nil {
		release = func() {}
	}
	h := &hold{release: release}
	h.n.Store(1)
	parent, _ := ctx.Value(holdsKey{}).([]*hold)
	holds := append(parent[:len(parent):len(parent)], h)
	return context.WithValue(ctx, holdsKey{}, holds), h.drop
}

// keepHolds is called by AttemptTimeout when it abandons a running tool: the
// holds of ctx wait for the returned function, which the tool's goroutine
// calls when the tool returns.
func keepHolds(ctx context.Context) (done func()) {
	holds, _ := ctx.Value(holdsKey{}).([]*hold)
	if len(holds) == 0 {
		return func() {}
	}
	for _, h := range holds {
		h.add()
	}
	return func() {
		for _, h := range holds {
			h.drop()
		}
	}
}
