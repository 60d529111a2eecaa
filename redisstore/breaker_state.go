package redisstore

import (
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// State returns the fleet's state as this replica last learned it (the
// local breaker's while Redis is unavailable). An open breaker whose delay
// is over stays open until the next TryAcquirePermit turns it half-open.
func (b *Breaker) State() circuitbreaker.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.onLocal {
		return b.local.State()
	}
	return b.state
}

// IsOpen reports whether State is open.
func (b *Breaker) IsOpen() bool { return b.State() == circuitbreaker.OpenState }

// IsHalfOpen reports whether State is half-open.
func (b *Breaker) IsHalfOpen() bool { return b.State() == circuitbreaker.HalfOpenState }

// IsClosed reports whether State is closed.
func (b *Breaker) IsClosed() bool { return b.State() == circuitbreaker.ClosedState }

// RemainingDelay returns how long an open breaker stays open, as this
// replica last learned it; 0 in the other states.
func (b *Breaker) RemainingDelay() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.onLocal {
		return b.local.RemainingDelay()
	}
	if b.state != circuitbreaker.OpenState {
		return 0
	}
	return max(0, time.Until(b.openUntil))
}

// Metrics returns the fleet's counts as this replica last learned them
// (the local breaker's while Redis is unavailable): in the closed state
// the failures and outcomes counted toward opening (in a row: the failures
// only), in the half-open state the probes that succeeded.
func (b *Breaker) Metrics() circuitbreaker.Metrics {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.onLocal {
		return b.local.Metrics()
	}
	m := metrics{failures: b.failures, executions: b.outcomes, successes: b.outcomes - b.failures}
	if b.state == circuitbreaker.HalfOpenState {
		m = metrics{executions: b.successes, successes: b.successes}
	}
	return m
}

type metrics struct{ executions, failures, successes uint }

func (m metrics) Executions() uint { return m.executions }
func (m metrics) Failures() uint   { return m.failures }
func (m metrics) Successes() uint  { return m.successes }
func (m metrics) FailureRate() float64 {
	if m.executions == 0 {
		return 0
	}
	return float64(m.failures) / float64(m.executions)
}
func (m metrics) SuccessRate() float64 {
	if m.executions == 0 {
		return 0
	}
	return float64(m.successes) / float64(m.executions)
}
