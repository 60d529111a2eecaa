package policy

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Bulkhead limits the attempts in flight to one dependency, across every
// tool that shares it, with failsafe-go's bulkhead. Each attempt holds a
// permit until its tool has really returned, even one its attempt timeout
// abandoned (counted in Result.Abandoned), so it bounds the real load on
// the upstream; a panic gives the permit back. An attempt that finds no
// permit within the wait is refused with tool-busy (bulkhead.ErrFull), not
// retried. Make it once per dependency with NewBulkhead and give it to each
// tool (toolsafe.WithBulkhead). It is safe for concurrent use.
type Bulkhead struct {
	bh         bulkhead.Bulkhead[string]
	dependency string
	maxWait    time.Duration
	limit      uint
	inUse      atomic.Int64 // permits held: failsafe-go's bulkhead does not tell
}

// NewBulkhead returns a bulkhead for the dependency named dependency that
// lets at most maxConcurrent attempts run at once; zero means 1. An attempt
// that finds it full waits up to maxWait for a permit (zero or less: it does
// not wait), and never longer than its context allows.
func NewBulkhead(dependency string, maxConcurrent uint, maxWait time.Duration) *Bulkhead {
	if maxConcurrent == 0 {
		maxConcurrent = 1
	}
	return &Bulkhead{
		bh:         bulkhead.New[string](maxConcurrent),
		dependency: dependency,
		maxWait:    max(maxWait, 0),
		limit:      maxConcurrent,
	}
}

// Dependency is the name of the dependency the bulkhead guards.
func (b *Bulkhead) Dependency() string { return b.dependency }

// MaxConcurrent is how many attempts may hold a permit at once: the
// maxConcurrent given to NewBulkhead, 1 for zero.
func (b *Bulkhead) MaxConcurrent() int { return int(b.limit) }

// InUse is how many permits are held now: attempts running, those the
// attempt timeout abandoned whose tool has not returned included. From 0 to
// MaxConcurrent; it may be a moment behind a permit just taken or given
// back. Safe for concurrent use (an operator's gauge reads it, see package
// otelhook).
func (b *Bulkhead) InUse() int { return int(b.inUse.Load()) }

// release gives back a permit taken by the middleware.
func (b *Bulkhead) release() {
	b.inUse.Add(-1)
	b.bh.ReleasePermit()
}

// Validate reports a Bulkhead that cannot work: nil, or the zero Bulkhead,
// which has no permits to give. Make one with NewBulkhead.
func (b *Bulkhead) Validate() error {
	if b == nil || b.bh == nil {
		return errors.New("the bulkhead was not made by policy.NewBulkhead: use policy.NewBulkhead(dependency, maxConcurrent, maxWait)")
	}
	return nil
}

// Middleware returns the layer that takes a permit for each attempt (see
// Bulkhead). toolsafe places it inside the circuit breaker and the approval
// gate, outside the attempt timeout. While it waits for a free slot, the
// call records call.Waiting, so a deadline that passes then tells the
// model the tool was never called. When ctx ends while waiting for a
// permit, it returns ctx.Err().
func (b *Bulkhead) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			if !b.bh.TryAcquirePermit() {
				if b.maxWait <= 0 {
					return "", refused(bulkhead.ErrFull, b.dependency, 0)
				}
				call.Record(ctx, call.Waiting{For: call.WaitingForSlot, Dependency: b.dependency})
				err := b.bh.AcquirePermitWithMaxWait(ctx, b.maxWait)
				if ctx.Err() != nil {
					if err == nil {
						b.bh.ReleasePermit()
					}
					return "", ctx.Err() // still waiting for a slot, as the record says
				}
				call.Record(ctx, call.Waiting{For: call.NotWaiting})
				if err != nil {
					return "", refused(bulkhead.ErrFull, b.dependency, 0)
				}
			}
			b.inUse.Add(1)
			hctx, done := layer.Hold(ctx, b.release)
			defer done()
			return next.Call(hctx, input)
		})
	}
}
