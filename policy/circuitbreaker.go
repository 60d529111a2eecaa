package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

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

// CircuitBreaker is a failsafe-go circuit breaker (it embeds one) for one
// dependency, shared by the tools that call it, driven with tool semantics:
// only tool-failed and tool-timeout of attempts that reached the tool are
// failures; tool-error, args-invalid, a panic, tool-busy and the caller's
// own cancellation count neither way and give their permit back once the
// tool returns. While open it refuses at once with circuit-open; while
// half-open at most Breaker.Probes attempts run at once. Make it with
// NewCircuitBreaker or FromCircuitBreaker; it is safe for concurrent use.
type CircuitBreaker struct {
	circuitbreaker.CircuitBreaker[string]
	dependency string
	invalid    error // what Breaker.Validate said of the configuration
	maxProbes  uint  // Breaker.Probes; 0 for an adopted breaker

	mu      sync.Mutex // serializes permits and records, so transitions are seen
	period  uint64     // counts the half-open periods seen so far
	spare   uint       // permits handed back during the current half-open period
	probing uint       // half-open probes whose tool has not returned yet
}

// NewCircuitBreaker returns a circuit breaker for the dependency named
// dependency ("billing", named in the model's message while open),
// configured by b as failsafe-go's WithFailureThreshold(b.FailureThreshold)
// (or WithFailureThresholdRatio with b.Window), WithDelay(b.Delay) and
// WithSuccessThreshold(b.Probes). An invalid b is reported by the breaker's
// Validate, which toolsafe.New calls. For time-based thresholds build the
// breaker with failsafe-go and adopt it with FromCircuitBreaker.
func NewCircuitBreaker(dependency string, b Breaker) *CircuitBreaker {
	invalid := b.Validate()
	b = b.withDefaults()
	builder := circuitbreaker.NewBuilder[string]()
	if b.Window > b.FailureThreshold {
		builder = builder.WithFailureThresholdRatio(b.FailureThreshold, b.Window)
	} else {
		builder = builder.WithFailureThreshold(b.FailureThreshold)
	}
	cb := builder.
		WithDelay(b.Delay).
		WithSuccessThreshold(b.Probes).
		Build()
	own := FromCircuitBreaker(dependency, cb)
	own.invalid, own.maxProbes = invalid, b.Probes
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

// PermitReleaser is implemented by a failsafe-go circuit breaker that can
// take back a half-open permit without counting an outcome, such as one
// whose permits are shared by a fleet (package redisstore). A
// CircuitBreaker adopting one calls ReleasePermit when a probe's tool has
// returned with an outcome that counts neither way (the caller canceled
// it), instead of keeping the permit for the next probe of the same
// half-open period, which it does for a breaker that cannot take it back.
type PermitReleaser interface {
	ReleasePermit()
}

// permit is what an attempt holds while it runs.
type permit struct {
	halfOpen bool // a probe: counted in probing until its tool returns
	period   uint64
}

// change is a state change to tell the call about.
type change struct{ from, to circuitbreaker.State }

// acquire asks for a permit; ok is false when the breaker is open, or
// half-open with every probe out.
func (cb *CircuitBreaker) acquire() (p permit, ok bool, ch change) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	before := cb.State()
	ch.from, ch.to = before, before
	if before == circuitbreaker.HalfOpenState {
		if cb.maxProbes > 0 && cb.probing >= cb.maxProbes {
			return permit{}, false, ch
		}
		if cb.spare > 0 {
			cb.spare--
			cb.probing++
			return permit{halfOpen: true, period: cb.period}, true, ch
		}
	} else {
		cb.spare = 0
	}
	ok = cb.TryAcquirePermit()
	after := cb.State()
	ch.to = after
	if after == circuitbreaker.HalfOpenState && before != circuitbreaker.HalfOpenState {
		cb.period++ // open → half-open happens lazily, here
	}
	p = permit{halfOpen: after == circuitbreaker.HalfOpenState, period: cb.period}
	if ok && p.halfOpen {
		if cb.maxProbes > 0 && cb.probing >= cb.maxProbes {
			cb.spare++ // an abandoned probe of an earlier period still runs
			return permit{}, false, ch
		}
		cb.probing++
	}
	return p, ok, ch
}

// outcome is how an attempt counts.
type outcome int

const (
	neutral outcome = iota
	success
	failure
)

// record records the outcome of the attempt that held p, as soon as the
// attempt ends for its caller, so the breaker opens without waiting for an
// abandoned tool. A neutral outcome records nothing: its permit is handed
// back by release.
func (cb *CircuitBreaker) record(o outcome) (ch change) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	before := cb.State()
	switch o {
	case success:
		cb.RecordSuccess()
	case failure:
		cb.RecordFailure()
	}
	after := cb.State()
	if after != circuitbreaker.HalfOpenState {
		cb.spare = 0
	}
	return change{before, after}
}

// release runs when the tool of the attempt that held p has really
// returned: a probe is no longer at the dependency, and a neutral
// outcome's half-open permit goes back to the breaker. failsafe-go has no
// call to give a permit back without counting, so it stays taken there and
// the next probe of the same half-open period uses it (acquire).
func (cb *CircuitBreaker) release(p permit, o outcome) {
	pr, releases := cb.CircuitBreaker.(PermitReleaser)
	cb.mu.Lock()
	if p.halfOpen && cb.probing > 0 {
		cb.probing--
	}
	if !releases && o == neutral && p.halfOpen && cb.State() == circuitbreaker.HalfOpenState && p.period == cb.period {
		cb.spare++
	}
	cb.mu.Unlock()
	if releases && o == neutral && p.halfOpen {
		pr.ReleasePermit() // maybe a network call: outside the lock
	}
}

// report tells the call in ctx that the breaker changed state; it runs
// outside the breaker's lock.
func (cb *CircuitBreaker) report(ctx context.Context, ch change) {
	if ch.from != ch.to {
		call.Record(ctx, call.BreakerStateChanged{Breaker: cb.dependency, From: ch.from.String(), To: ch.to.String()})
	}
}

// count decides how the outcome of an attempt counts (see CircuitBreaker).
// called reports whether the attempt reached the tool.
func count(ctx context.Context, err error, called bool) outcome {
	if err == nil {
		return success
	}
	switch call.HowEnded(ctx) {
	case call.ByCaller:
		return neutral
	case call.ByDeadline:
		if called {
			return failure
		}
		return neutral
	}
	switch kind, _ := middleware.Classify(err); kind {
	case middleware.KindFailed, middleware.KindTimeout:
		if called {
			return failure
		}
	}
	return neutral
}

// Middleware returns the layer that asks cb for a permit before each attempt
// and records the attempt's outcome (see CircuitBreaker). toolsafe places it
// inside the approval gate, outside the bulkhead. A panic going through it
// gives the permit back, uncounted, and goes on.
func (cb *CircuitBreaker) Middleware() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			p, ok, ch := cb.acquire()
			cb.report(ctx, ch)
			if !ok {
				return "", refused(circuitbreaker.ErrOpen, cb.dependency, cb.RemainingDelay())
			}
			if p.halfOpen {
				call.Record(ctx, call.BreakerProbe{Breaker: cb.dependency})
			}
			o := neutral
			hctx, done := layer.Hold(ctx, func() { cb.release(p, o) })
			defer done()
			if p.halfOpen {
				hctx = context.WithValue(hctx, probeKey{}, true) // only probes pay for it
			}
			call := call.From(ctx)
			before := call.Attempts()
			out, err := next.Call(hctx, input)
			o = count(ctx, err, call == nil || call.Attempts() > before)
			cb.report(ctx, cb.record(o))
			return out, err
		})
	}
}

type probeKey struct{}

// IsProbe reports whether the attempt running in ctx was let through by a
// CircuitBreaker (its Middleware, as toolsafe.WithCircuitBreaker places it)
// as a half-open probe: the breaker was half-open and this attempt is one
// of the at most Breaker.Probes that test whether the dependency is back.
// A tool may tell its upstream so, or log it. It is false outside a
// breaker, while the breaker is closed, and outside an attempt.
func IsProbe(ctx context.Context) bool {
	probe, _ := ctx.Value(probeKey{}).(bool)
	return probe
}
