package redisstore

import "github.com/failsafe-go/failsafe-go/circuitbreaker"

// learnLocked takes in what Redis answered, unless an answer of a later
// epoch came first; an outage since the last answer forgets the permits
// held (Redis may have lost them, or let them expire) and the epoch (a
// restarted Redis counts again from zero).
func (b *Breaker) learnLocked(a answer) {
	if n := b.scope.outages.Load(); n != b.synced {
		b.synced = n
		b.epoch, b.version, b.inc = -1, -1, ""
		b.held = nil
	}
	b.onLocal = false
	if a.inc == b.inc && a.version < b.version {
		return // an answer older than one already learned
	}
	if a.inc == b.inc && a.version == b.version {
		// The same state again (a change's answer and its message, or a
		// refresh): newer news of it, but its open delay, counted from
		// the first to arrive, is not moved later.
		b.learned = a.received
		if a.gen >= 0 {
			b.gen = a.gen
		}
		return
	}
	if a.epoch != b.epoch {
		keep := b.held[:0]
		for _, p := range b.held {
			if p.epoch == a.epoch {
				keep = append(keep, p)
			}
		}
		b.held = keep
	}
	b.state, b.epoch, b.version, b.inc, b.learned, b.gen = a.state, a.epoch, a.version, a.inc, a.received, a.gen
	b.openUntil = a.received.Add(a.remaining)
	b.failures, b.outcomes, b.successes = a.failures, a.outcomes, a.successes
}

// localLocked returns the local breaker, first set to the fleet's state
// as last learned when an outage began since it was last set.
func (b *Breaker) localLocked() circuitbreaker.CircuitBreaker[string] {
	if n := b.scope.outages.Load(); n != b.seeded {
		b.seeded = n
		switch {
		case b.epoch < 0: // nothing learned: keep the local state
		case b.state == circuitbreaker.OpenState:
			b.local.Open()
		case b.state == circuitbreaker.HalfOpenState:
			b.local.HalfOpen()
		default:
			b.local.Close()
		}
	}
	b.onLocal = true
	b.s.health.decidedLocally(stateBreaker)
	return b.local
}

// cachedLocked reports whether the state last learned is the fleet's as
// of now, but for its age: learned from Redis since the last outage, and
// Redis available.
func (b *Breaker) cachedLocked() bool {
	return b.epoch >= 0 && !b.onLocal && b.synced == b.scope.outages.Load() && b.s.health.available(b.keys[0])
}

// trustedLocked reports whether the subscription to changes has been
// live since the state was learned: a change would have reached it.
func (b *Breaker) trustedLocked() bool {
	live, gen := b.s.changes.live()
	return live && b.gen == gen
}

// learnChange takes in a change another replica (or this one) made,
// published by the breaker script.
func (b *Breaker) learnChange(a answer, gen int64) {
	a.gen = gen
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.epoch < 0 || !b.cachedLocked() {
		return // nothing learned yet, or an outage since: the next permit asks Redis
	}
	b.learnLocked(a)
	if b.onChange != nil {
		b.onChange()
	}
}

// refreshState learns the fleet's state again, in the background.
func (b *Breaker) refreshState() {
	a, err := b.run("peek", opPeek, permit{})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refresh = false
	if err == nil {
		b.learnLocked(a)
	}
}
