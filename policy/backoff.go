package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Backoff computes the delay before a retry. The zero Backoff's Delay is 0,
// but a Retry given the zero Backoff waits as DefaultBackoff (see
// Retry.Backoff); use Constant for a fixed delay.
// A Backoff is a value: copy it freely; it is safe for concurrent use when
// its Rand is.
type Backoff struct {
	// Base is the delay after the first failed attempt, before jitter. Zero
	// means no delay.
	Base time.Duration
	// Max caps the delay before jitter is applied, so a delay can reach
	// Max × (1 + Jitter): with Max 30s and Jitter 0.25, up to 37.5s. Zero
	// means no cap (the call's deadline still bounds every delay).
	Max time.Duration
	// Multiplier is the growth of the delay from one retry to the next; zero
	// means 1 (a constant delay). It must not be negative.
	Multiplier float64
	// Jitter is the largest fraction added at random to a delay, in [0, 1]:
	// 0.25 turns 1s into 1s..1.25s. Jitter only lengthens a delay, so a
	// server's Retry-After is never cut short.
	Jitter float64
	// Rand returns a number in [0, 1). Nil means math/rand/v2's Float64.
	// Tests inject a fixed value to get exact delays.
	Rand func() float64
}

// DefaultBackoff returns Base 500ms, Max 30s, Multiplier 2, Jitter 0.25: delays
// of 0.5–0.625s, 1–1.25s, 2–2.5s, ... up to 30–37.5s.
func DefaultBackoff() Backoff {
	return Backoff{Base: 500 * time.Millisecond, Max: 30 * time.Second, Multiplier: 2, Jitter: 0.25}
}

// OrDefault returns DefaultBackoff for the zero Backoff and b otherwise:
// the delays a Retry with b waits (see Retry.Backoff).
func (b Backoff) OrDefault() Backoff {
	if b.Base == 0 && b.Max == 0 && b.Multiplier == 0 && b.Jitter == 0 && b.Rand == nil {
		return DefaultBackoff()
	}
	return b
}

// Constant returns a Backoff that waits d before every retry, with no
// jitter: Constant(0) retries at once. (A Retry with the zero Backoff waits
// as DefaultBackoff instead.)
func Constant(d time.Duration) Backoff {
	return Backoff{Base: d, Multiplier: 1}
}

// Delay returns the delay after failed attempt n (n ≥ 1; n < 1 counts as 1):
//
//	min(Max, Base × Multiplier^(n−1)) × (1 + Rand() × Jitter)
//
// With DefaultBackoff and Rand returning 0, attempts 1, 2, 3 give 500ms, 1s
// and 2s. The result never overflows: it saturates at the largest
// time.Duration.
func (b Backoff) Delay(n int) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	if n < 1 {
		n = 1
	}
	mult := b.Multiplier
	if mult == 0 {
		mult = 1
	}
	d := float64(b.Base) * math.Pow(mult, float64(n-1))
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	if b.Jitter > 0 {
		r := b.Rand
		if r == nil {
			r = rand.Float64
		}
		d *= 1 + r()*b.Jitter
	}
	if d >= math.MaxInt64 || math.IsNaN(d) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Validate reports a Backoff that cannot work, naming every problem: a
// negative Base or Max, a negative Multiplier, or Jitter outside [0, 1].
func (b Backoff) Validate() error { return errors.Join(b.problems()...) }

func (b Backoff) problems() []error {
	var errs []error
	if b.Base < 0 {
		errs = append(errs, fmt.Errorf("backoff base %v is negative: use 0 for no wait, or a positive duration such as 500ms", b.Base))
	}
	if b.Max < 0 {
		errs = append(errs, fmt.Errorf("backoff max %v is negative: use 0 for no cap, or a positive duration such as 30s", b.Max))
	}
	if b.Multiplier < 0 || math.IsNaN(b.Multiplier) {
		errs = append(errs, fmt.Errorf("backoff multiplier %v is negative: use 1 for a constant wait, 2 to double it", b.Multiplier))
	}
	if b.Jitter < 0 || b.Jitter > 1 || math.IsNaN(b.Jitter) {
		errs = append(errs, fmt.Errorf("backoff jitter %v is outside [0, 1]: 0.25 adds up to 25%% to each wait", b.Jitter))
	}
	return errs
}
