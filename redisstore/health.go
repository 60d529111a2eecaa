package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// health follows whether Redis answers: one outage begins at the first
// operation that fails and ends when a background PING answers.
type health struct {
	s        *Store
	down     atomic.Bool
	outages  atomic.Int64 // outages begun since New; also tells breakers an outage happened
	local    atomic.Int64 // decisions taken locally during the current outage
	refusals atomic.Int64 // grant and ledger operations refused during it

	mu     sync.Mutex
	since  time.Time // when the current outage began
	ended  time.Time // when the last one ended
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newHealth(s *Store) *health { return &health{s: s, stop: make(chan struct{})} }

// fail records that op failed with err: the first failure of an outage
// counts it, logs it (WARN without the error's text, which goes to DEBUG)
// and starts the recheck.
//
// A failure within one recheck interval of the end of an outage (Redis
// that answered one PING and failed the next operation, such as one on a
// connection it reset as it restarted) is a flap: it is logged at DEBUG
// only, and becomes an outage of its own, counted and logged, only if the
// next recheck fails too.
func (h *health) fail(op operation, err error) {
	if !h.down.CompareAndSwap(false, true) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	flap := !h.ended.IsZero() && time.Since(h.ended) < h.s.cfg.recheck
	if flap {
		h.s.logger().Debug("redisstore: redis failed again just after it answered", "prefix", h.s.cfg.prefix, "operation", string(op), "error", err.Error())
	} else {
		h.beginLocked(op)
		h.s.logger().Debug("redisstore: redis is unavailable", "prefix", h.s.cfg.prefix, "operation", string(op), "error", err.Error())
	}
	if h.closed {
		return
	}
	h.wg.Add(1)
	go h.recheck(flap)
}

// beginLocked begins an outage: it is counted and logged once.
func (h *health) beginLocked(op operation) {
	n := h.outages.Add(1)
	h.local.Store(0)
	h.refusals.Store(0)
	h.since = time.Now()
	h.s.m.outages.Add(context.Background(), 1)
	h.s.logger().Warn("redisstore: redis is unavailable; breakers and retry budgets decide locally, grants and run ledgers refuse, until it answers again",
		"prefix", h.s.cfg.prefix, "operation", string(op), "outage", n)
}

// recheck pings Redis every recheck interval until it answers, then ends
// the outage. After a flap, a PING that fails begins an outage.
func (h *health) recheck(flap bool) {
	defer h.wg.Done()
	t := time.NewTicker(h.s.cfg.recheck)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), h.s.cfg.timeout)
		err := h.s.client.Ping(ctx).Err()
		cancel()
		h.mu.Lock()
		if err != nil {
			if flap {
				flap = false
				h.beginLocked("ping")
			}
			h.mu.Unlock()
			continue
		}
		since := h.since
		h.ended = time.Now()
		h.mu.Unlock()
		h.down.Store(false)
		if flap {
			h.s.logger().Debug("redisstore: redis answers again", "prefix", h.s.cfg.prefix, "outage", h.outages.Load())
			return
		}
		h.s.m.recoveries.Add(context.Background(), 1)
		h.s.logger().Info("redisstore: redis answers again; breakers and retry budgets share their state again",
			"prefix", h.s.cfg.prefix, "outage", h.outages.Load(),
			"unavailable_for", time.Since(since).Round(time.Millisecond).String(),
			"local_decisions", h.local.Load(), "refused_operations", h.refusals.Load())
		return
	}
}

// decidedLocally counts a breaker's or a budget's decision taken without
// Redis.
func (h *health) decidedLocally(st stateKind) {
	h.local.Add(1)
	h.s.m.local.Add(context.Background(), 1, st.set())
}

// refused counts a grant or ledger operation refused for Redis's outage.
func (h *health) refused(st stateKind) {
	h.refusals.Add(1)
	h.s.m.refused.Add(context.Background(), 1, st.set())
}

func (h *health) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// digest is a short hash of s for keys: 128 bits of SHA-256, in hex.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
