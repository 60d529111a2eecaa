package webhook

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolsafe/toolsafe/inbox"
)

// Watch sends n's events for store until ctx ends: every interval (at
// least 100ms) it lists the requests waiting and the latest answers, and
// sends "waiting" for each request it has not seen, "decided" for each
// answer it has not seen (the answers recorded before Watch began are not
// sent; the requests waiting then are, so after a restart a receiver gets
// "waiting" again for each request still waiting, with the same Event.ID
// and Idempotency-Key as before, and drops what it has handled). Events are sent one at a time, in
// order; one that cannot be delivered after its retries is logged at WARN
// by logger (nil: slog.Default()) without the receiver's answer, and
// dropped. Run one Watch per store: two send each event twice. It returns
// ctx.Err().
func Watch(ctx context.Context, store inbox.Store, n *Notifier, interval time.Duration, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	interval = max(interval, 100*time.Millisecond)
	seen := map[string]bool{}     // request IDs notified as waiting
	answered := map[string]bool{} // the answers of the last look, by their event IDs
	first := true
	if recs, err := store.Audit(ctx, 100); err == nil {
		// The answers recorded before Watch began are not sent.
		for _, r := range recs {
			answered[decidedID(r)] = true
		}
		first = false
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		reqs, err := store.Requests(ctx)
		if err == nil {
			now := map[string]bool{}
			for _, r := range reqs {
				now[r.ID] = true
				if !seen[r.ID] {
					n.deliver(ctx, logger, n.Waiting(r))
				}
			}
			seen = now // forget those no longer waiting: bounded by the store's list
		}
		recs, err := store.Audit(ctx, 100)
		if err == nil {
			now := make(map[string]bool, len(recs))
			for i := len(recs) - 1; i >= 0; i-- { // oldest first
				r := recs[i]
				k := decidedID(r)
				now[k] = true
				if !first && !answered[k] {
					n.deliver(ctx, logger, n.Decided(r))
				}
			}
			answered, first = now, false
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (n *Notifier) deliver(ctx context.Context, logger *slog.Logger, e Event) {
	if err := n.Send(ctx, e); err != nil && ctx.Err() == nil {
		logger.Warn("webhook: an approval event was not delivered", "event", e.Event, "request", e.RequestID, "tool", e.Tool)
		logger.Debug("webhook: an approval event was not delivered", "event", e.Event, "request", e.RequestID, "error", err.Error())
	}
}
