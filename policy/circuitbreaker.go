package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// Breaker configures NewCircuitBreaker. The zero Breaker opens after 5
// counted failures in a row, stays open 30s, then lets 1 probe through.
type Breaker struct {
	// FailureThreshold is the number of counted failures that opens the
	// breaker: in a row, or among the last Window attempts. Zero means 5.
	FailureThreshold uint
	// Window, when larger than FailureThreshold, makes the threshold a
	// ratio: FailureThreshold 5 and Window 10 open the breaker when 5 of the
	// last 10 counted attempts failed. Zero (or any value not larger than
	// FailureThreshold) means that many failures in a row.
	Window uint
	// Delay is how long the breaker stays open before it lets probes
	// through (half-open). Zero means 30s. While open, every call fails at
	// once with circuit-open and the model is told about how long is left.
	Delay time.Duration
	// Probes is how many attempts may run at once while half-open, and how
	// many of them must succeed in a row to close the breaker; one counted
	// failure opens it again. Zero means 1.
	Probes uint
}

// The values a zero field of Breaker means.
const (
	DefaultFailureThreshold = 5
	DefaultBreakerDelay     = 30 * time.Second
	DefaultProbes           = 1
)

// withDefaults returns b with every zero field set to what it means.
func (b Breaker) withDefaults() Breaker {
	if b.FailureThreshold == 0 {
		b.FailureThreshold = DefaultFailureThreshold
	}
	if b.Delay <= 0 {
		b.Delay = DefaultBreakerDelay
	}
	if b.Probes == 0 {
		b.Probes = DefaultProbes
	}
	return b
}

// Validate reports a Breaker that could never open: a Window, other than
// zero, smaller than the failures that must happen within it.
func (b Breaker) Validate() error {
	d := b.withDefaults()
	if b.Window != 0 && d.Window < d.FailureThreshold {
		return fmt.Errorf("window %d is smaller than failures %d: the breaker could never open; make the window at least %d, or 0 for failures in a row",
			d.Window, d.FailureThreshold, d.FailureThreshold)
	}
	return nil
}

// CircuitBreaker is a failsafe-go circuit breaker for one dependency (every
// tool that calls it shares one), driven with tool semantics. Make it once
// per dependency with NewCircuitBreaker, or FromCircuitBreaker to adopt a
// breaker built with failsafe-go's circuitbreaker.Builder, and give it to
// each tool (toolsafe.WithCircuitBreaker).
//
// It embeds the failsafe-go breaker, so it is a
// circuitbreaker.CircuitBreaker[string]: State, RemainingDelay, Metrics and
// the rest are failsafe-go's. Every attempt of a wrapped tool asks it for a
// permit (layer 7 of DESIGN.md §2), and its outcome is recorded this way:
//
//   - success: a success;
//   - tool-failed (a transient failure) and tool-timeout (the attempt
//     timeout expired): a failure;
//   - anything else counts neither way: tool-error and args-invalid (the
//     dependency answered; the input was wrong), approval pauses and
//     denials (nothing ran), tool-panic (a bug in the tool, not the
//     dependency), tool-busy (the bulkhead refused), and the caller's
//     cancellation or the call's deadline passing. Such an attempt gives
//     its permit back, so a half-open breaker lets another probe through
//     instead of waiting forever for one that will not report. (failsafe-go
//     itself would count an excluded error as a success and a cancellation
//     as a failure; this is why toolsafe drives the breaker itself.)
//
// While open, an attempt fails at once with a *middleware.Failure of
// KindCircuitOpen, not retried, whose Detail names the dependency and whose
// Wait is the time left before probes are let through.
//
// A CircuitBreaker is safe for concurrent use. Its listeners (OnOpen,
// OnStateChanged, ...) run while it holds its lock: they must not call a
// tool that uses the same breaker. Calling Open, Close or HalfOpen on it by
// hand is allowed; a cancelled probe's permit handed back before such a
// call may then let one extra probe through.
type CircuitBreaker struct {
	circuitbreaker.CircuitBreaker[string]
	dependency string
	invalid    error // what Breaker.Validate said of the configuration

	mu     sync.Mutex // serializes permits and records, so transitions are seen
	period uint64     // counts the half-open periods seen so far
	spare  uint       // permits handed back during the current half-open period
}

// NewCircuitBreaker returns a circuit breaker for the dependency named
// dependency ("billing"; it appears in the model's message when the breaker
// is open), configured by b: count based, failsafe-go's
// WithFailureThreshold(b.FailureThreshold) (or
// WithFailureThresholdRatio(b.FailureThreshold, b.Window)), WithDelay(b.Delay)
// and WithSuccessThreshold(b.Probes). Time-based thresholds: build the
// breaker with failsafe-go and adopt it with FromCircuitBreaker.
func NewCircuitBreaker(dependency string, b Breaker) *CircuitBreaker {
	invalid := b.Validate()
	b = b.withDefaults()
	threshold, delay, probes := b.FailureThreshold, b.Delay, b.Probes
	builder := circuitbreaker.NewBuilder[string]()
	if b.Window > threshold {
		builder = builder.WithFailureThresholdRatio(threshold, b.Window)
	} else {
		builder = builder.WithFailureThreshold(threshold)
	}
	cb := builder.
		WithDelay(delay).
		WithSuccessThreshold(probes).
		Build()
	own := FromCircuitBreaker(dependency, cb)
	own.invalid = invalid
	return own
}

// FromCircuitBreaker adopts cb, a breaker built with failsafe-go, for the
// dependency named dependency ("" for none: the message then says only that
// the dependency is down). cb's own thresholds, delay and listeners apply;
// its failure conditions (HandleErrors, HandleIf) do not, because
// CircuitBreaker decides what counts (see its doc). To share one breaker
// among several tools, adopt it once and give the *CircuitBreaker to each.
// A cb that is already a *CircuitBreaker is returned as is. A nil cb gives
// nil.
func FromCircuitBreaker(dependency string, cb circuitbreaker.CircuitBreaker[string]) *CircuitBreaker {
	if cb == nil {
		return nil
	}
	if own, ok := cb.(*CircuitBreaker); ok {
		return own // already adopted: keep its name and its shared state
	}
	return &CircuitBreaker{CircuitBreaker: cb, dependency: dependency}
}

// Dependency is the name of the dependency the breaker guards.
func (cb *CircuitBreaker) Dependency() string { return cb.dependency }

// Validate reports a CircuitBreaker that cannot work: nil, the zero
// CircuitBreaker, which has no failsafe-go breaker inside (make one with
// NewCircuitBreaker or FromCircuitBreaker), or one made from a Breaker that
// Breaker.Validate refuses. toolsafe.New reports it.
func (cb *CircuitBreaker) Validate() error {
	if cb == nil || cb.CircuitBreaker == nil {
		return errors.New("the circuit breaker was not made by policy.NewCircuitBreaker or policy.FromCircuitBreaker: use policy.NewCircuitBreaker(dependency, policy.Breaker{...})")
	}
	if cb.invalid != nil {
		return fmt.Errorf("circuit breaker %s: %w", cb.dependency, cb.invalid)
	}
	return nil
}

// permit is what an attempt holds while it runs.
type permit struct {
	halfOpen bool
	period   uint64
}

// acquire asks for a permit; ok is false when the breaker is open (or
// half-open with every probe out).
func (cb *CircuitBreaker) acquire(ctx context.Context) (p permit, ok bool) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	before := cb.State()
	if before != circuitbreaker.HalfOpenState {
		cb.spare = 0
	} else if cb.spare > 0 {
		cb.spare--
		return permit{halfOpen: true, period: cb.period}, true
	}
	ok = cb.TryAcquirePermit()
	after := cb.State()
	if after == circuitbreaker.HalfOpenState && before != circuitbreaker.HalfOpenState {
		cb.period++ // open → half-open happens lazily, here
	}
	cb.report(ctx, before, after)
	return permit{halfOpen: after == circuitbreaker.HalfOpenState, period: cb.period}, ok
}

// outcome is how an attempt counts.
type outcome int

const (
	neutral outcome = iota
	success
	failure
)

// settle records the attempt that held p.
func (cb *CircuitBreaker) settle(ctx context.Context, p permit, o outcome) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	before := cb.State()
	switch o {
	case success:
		cb.RecordSuccess()
	case failure:
		cb.RecordFailure()
	default:
		// Give the permit back without counting: failsafe-go has no call for
		// that, so it stays taken there and the next probe of the same
		// half-open period uses it (acquire). Closed and open breakers hand
		// out no limited permits.
		if p.halfOpen && before == circuitbreaker.HalfOpenState && p.period == cb.period {
			cb.spare++
		}
		return
	}
	after := cb.State()
	if after != circuitbreaker.HalfOpenState {
		cb.spare = 0
	}
	cb.report(ctx, before, after)
}

// report tells the call in ctx that the breaker changed state.
func (cb *CircuitBreaker) report(ctx context.Context, before, after circuitbreaker.State) {
	if before != after {
		middleware.CallFrom(ctx).RecordBreakerStateChange(cb.dependency, before.String(), after.String())
	}
}

// count decides how the outcome of an attempt counts (see CircuitBreaker).
func count(ctx context.Context, err error) outcome {
	if err == nil {
		return success
	}
	if ctx.Err() != nil {
		return neutral
	}
	switch kind, _ := middleware.Classify(err); kind {
	case middleware.KindFailed, middleware.KindTimeout:
		return failure
	}
	return neutral
}

// Middleware returns the layer that asks cb for a permit before each attempt
// and records the attempt's outcome (see CircuitBreaker). toolsafe places it
// inside the retry, outside the bulkhead. A panic going through it gives the
// permit back, uncounted, and goes on.
func (cb *CircuitBreaker) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			p, ok := cb.acquire(ctx)
			if !ok {
				call := middleware.CallFrom(ctx)
				attempts := 0
				if call != nil {
					attempts = call.Attempts()
				}
				return "", &middleware.Failure{
					Kind:      middleware.KindCircuitOpen,
					Tool:      next.Name(),
					Attempts:  attempts,
					Detail:    cb.dependency,
					Wait:      cb.RemainingDelay(),
					Cause:     circuitbreaker.ErrOpen,
					Retryable: false,
				}
			}
			o := neutral
			defer func() { cb.settle(ctx, p, o) }()
			out, err := next.Call(ctx, input)
			o = count(ctx, err)
			return out, err
		})
	}
}
