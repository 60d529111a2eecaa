package redisstore

import (
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// TryAcquirePermit asks the fleet's breaker for a permit: granted when
// closed, refused while open, and while half-open granted while fewer than
// Probes permits are out fleet-wide (an open breaker whose delay is over
// turns half-open here). RecordSuccess, RecordFailure or ReleasePermit
// gives it back. Closed and open answers come from the state last learned
// while the Store's subscription to changes is live, so they wait for no
// Redis operation; half-open permits always come from Redis.
func (b *Breaker) TryAcquirePermit() bool {
	b.mu.Lock()
	if granted, ok := b.fromCacheLocked(); ok {
		b.mu.Unlock()
		return granted
	}
	b.mu.Unlock()
	id := b.s.nextID()
	a, err := b.run("acquire", opAcquire, permit{id: id})
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		return b.localLocked().TryAcquirePermit()
	}
	b.learnLocked(a)
	if a.granted && a.state == circuitbreaker.HalfOpenState {
		b.held = append(b.held, permit{id: id, epoch: a.epoch})
	}
	return a.granted
}

// fromCacheLocked answers a permit from the state last learned, when it
// is fresh: learned within the max age (WithStateMaxAge) while the
// subscription to changes was live. Closed grants, open (within its delay)
// refuses; past half the max age it is refreshed in the background, open
// or closed alike, so that a replica that saw it open learns when Redis
// lost the breaker's keys. ok is false when Redis must be asked.
func (b *Breaker) fromCacheLocked() (granted, ok bool) {
	if !b.cachedLocked() {
		return false, false
	}
	now := time.Now()
	age := now.Sub(b.learned)
	open := b.state == circuitbreaker.OpenState && now.Before(b.openUntil)
	if !(open || b.state == circuitbreaker.ClosedState) || age >= b.s.cfg.maxAge || !b.trustedLocked() {
		return false, false
	}
	if age >= b.s.cfg.maxAge/2 && !b.refresh {
		b.refresh = true
		if !b.s.async(b.refreshState) {
			b.refresh = false
		}
	}
	return !open, true
}

// RecordSuccess records a success: in the closed state it ends a run of
// failures (or adds a success to the window); in the half-open state, with
// a permit this replica holds, it counts toward closing. It gives back the
// oldest half-open permit this replica holds. A success that changes
// nothing is not sent: in the closed state, counting failures in a row,
// when none were counted in the state last learned (within the state's
// max age, WithStateMaxAge). A failure of another replica recorded since
// is then not ended by it.
func (b *Breaker) RecordSuccess() { b.record("success", true) }

// RecordFailure records a failure: in the closed state it counts toward
// opening, fleet-wide; in the half-open state, with a permit this replica
// holds, it opens the breaker again. It gives back the oldest half-open
// permit this replica holds.
func (b *Breaker) RecordFailure() { b.record("failure", false) }

func (b *Breaker) record(op string, ok bool) {
	b.mu.Lock()
	var p permit
	if b.scope.outages.Load() == b.synced && len(b.held) > 0 {
		p, b.held = b.held[0], b.held[1:]
	}
	if ok && p.id == "" && b.cachedLocked() && b.trustedLocked() && b.inARow && b.state == circuitbreaker.ClosedState && b.failures == 0 && time.Since(b.learned) < b.s.cfg.maxAge {
		// A success of the closed state with no failure in a row (as last
		// learned, at this attempt's permit) changes nothing in Redis.
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	a, err := b.run(op, opRecord, p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if ok {
			b.localLocked().RecordSuccess()
		} else {
			b.localLocked().RecordFailure()
		}
		return
	}
	b.learnLocked(a)
}

// ReleasePermit gives back the oldest half-open permit this replica holds
// without counting an outcome: policy.CircuitBreaker calls it when a
// probe's tool has returned with an outcome that counts neither way (its
// caller canceled it), so the fleet lets the next probe through, and this
// replica never reuses a permit whose Redis entry may have expired.
func (b *Breaker) ReleasePermit() {
	b.mu.Lock()
	if b.scope.outages.Load() != b.synced || len(b.held) == 0 {
		b.mu.Unlock()
		return // none held, or forgotten in an outage: nothing in Redis to give back
	}
	p := b.held[0]
	b.held = b.held[1:]
	b.mu.Unlock()
	if a, err := b.run("release", opRecord, p); err == nil {
		b.mu.Lock()
		b.learnLocked(a)
		b.mu.Unlock()
	}
}

// RecordResult records a result as a success.
func (b *Breaker) RecordResult(string) { b.RecordSuccess() }

// RecordError records a nil err as a success and any other as a failure.
func (b *Breaker) RecordError(err error) {
	if err == nil {
		b.RecordSuccess()
	} else {
		b.RecordFailure()
	}
}

// Open opens the breaker for every replica, for its delay.
func (b *Breaker) Open() { b.force("open", circuitbreaker.OpenState) }

// Close closes the breaker for every replica.
func (b *Breaker) Close() { b.force("close", circuitbreaker.ClosedState) }

// HalfOpen half-opens the breaker for every replica.
func (b *Breaker) HalfOpen() { b.force("halfopen", circuitbreaker.HalfOpenState) }

func (b *Breaker) force(op string, to circuitbreaker.State) {
	a, err := b.run(op, opForce, permit{})
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		l := b.localLocked()
		switch to {
		case circuitbreaker.OpenState:
			l.Open()
		case circuitbreaker.HalfOpenState:
			l.HalfOpen()
		default:
			l.Close()
		}
		return
	}
	b.learnLocked(a)
}
