package redisstore

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/common"
	fspolicy "github.com/failsafe-go/failsafe-go/policy"

	"github.com/toolsafe/toolsafe/policy"
)

// MaxBreakerWindow is the largest policy.Breaker.Window a shared breaker
// takes: the outcomes of the last Window attempts are kept in Redis, one
// byte each.
const MaxBreakerWindow = 10_000

// CircuitBreaker returns the circuit breaker of the dependency named
// dependency, configured by b as policy.NewCircuitBreaker is, whose state
// every replica shares through Redis, adopted with policy.FromCircuitBreaker
// so that toolsafe decides what counts (transient failures and timeouts of
// attempts that reached the tool; the caller's cancellation is neutral).
// Give it to every tool of the dependency (toolsafe.WithCircuitBreaker), in
// every replica, with the same b.
//
// Failures count fleet-wide: b.FailureThreshold failures in a row (or
// among the last b.Window attempts) of all replicas together open it for
// every replica, for b.Delay; then at most b.Probes attempts of the whole
// fleet run at once as half-open probes, each holding a permit in Redis
// that expires after the permit TTL (WithPermitTTL) if its outcome is never
// recorded; b.Probes successes close it, one failure opens it again. Each
// permit and each outcome is one Lua script, atomic in Redis, so replicas
// never race on the state.
//
// When Redis is unavailable, the breaker decides with a local failsafe-go
// breaker of the same settings, which starts from the fleet's state as
// last seen (open stays open), until Redis answers again: then the fleet's
// state is used again as it is in Redis.
//
// It returns an error for an empty dependency name, for a b that
// Breaker.Validate refuses, or for a Window larger than MaxBreakerWindow.
// The failsafe-go breaker inside is a *Breaker.
func (s *Store) CircuitBreaker(dependency string, b policy.Breaker) (*policy.CircuitBreaker, error) {
	br, err := s.NewBreaker(dependency, b)
	if err != nil {
		return nil, err
	}
	return policy.FromCircuitBreaker(dependency, br), nil
}

// NewBreaker returns the shared breaker of the dependency named dependency
// itself, unadopted (see CircuitBreaker, which most programs want).
func (s *Store) NewBreaker(dependency string, b policy.Breaker) (*Breaker, error) {
	if dependency == "" {
		return nil, errors.New("redisstore: a shared circuit breaker needs the name of its dependency")
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("redisstore: circuit breaker %s: %w", dependency, err)
	}
	if b.Window > MaxBreakerWindow {
		return nil, fmt.Errorf("redisstore: circuit breaker %s: window %d is larger than %d", dependency, b.Window, MaxBreakerWindow)
	}
	if b.FailureThreshold == 0 {
		b.FailureThreshold = policy.DefaultFailureThreshold
	}
	if b.Delay <= 0 {
		b.Delay = policy.DefaultBreakerDelay
	}
	if b.Probes == 0 {
		b.Probes = policy.DefaultProbes
	}
	builder := circuitbreaker.NewBuilder[string]()
	window := uint(0)
	if b.Window > b.FailureThreshold {
		window = b.Window
		builder = builder.WithFailureThresholdRatio(b.FailureThreshold, b.Window)
	} else {
		builder = builder.WithFailureThreshold(b.FailureThreshold)
	}
	local := builder.WithDelay(b.Delay).WithSuccessThreshold(b.Probes).Build()
	tag := "{breaker:" + nameInKey(dependency) + "}"
	stateTTL := max(s.cfg.stateTTL, b.Delay+s.cfg.permitTTL)
	br := &Breaker{
		s:          s,
		dependency: dependency,
		tag:        tag,
		keys:       []string{s.key(tag), s.key(tag, "probes")},
		args: []any{
			b.FailureThreshold, window, b.Delay.Milliseconds(), b.Probes,
			s.cfg.permitTTL.Milliseconds(), stateTTL.Milliseconds(),
		},
		local:   local,
		epoch:   -1,
		version: -1,
		inARow:  window == 0,
		gen:     -1,
	}
	s.changes.add(br)
	return br, nil
}

// Breaker is a failsafe-go circuitbreaker.CircuitBreaker[string] whose
// state is kept in Redis and shared by every replica (see
// Store.CircuitBreaker, which adopts it for toolsafe). It is safe for
// concurrent use.
//
// State, IsOpen, IsHalfOpen, IsClosed, RemainingDelay and Metrics answer
// from what this replica last learned from Redis, without asking it (they
// are asked several times per attempt); TryAcquirePermit, RecordSuccess,
// RecordFailure, Open, HalfOpen and Close ask Redis, each with one
// operation bounded by the Store's timeout. While Redis is unavailable
// every method answers from the local breaker instead.
//
// toolsafe (policy.CircuitBreaker) calls TryAcquirePermit before an
// attempt and RecordSuccess or RecordFailure after it, or, for a probe
// whose outcome is neutral, ReleasePermit once its tool has returned. RecordResult and
// RecordError count a result as a success and an error as a failure.
// Used as a failsafe-go policy itself (failsafe.With), every error counts
// as a failure.
//
// A half-open permit lives the permit TTL (WithPermitTTL, 10 s by
// default) in Redis. A probe whose tool ignores its context and runs past
// it (abandoned by the attempt timeout) loses its fleet permit while it
// still runs, so another probe may reach the dependency: keep the permit
// TTL well above the tools' attempt timeouts.
//
// Make one with Store.CircuitBreaker or Store.NewBreaker; the zero Breaker
// has no Store and cannot be used.
type Breaker struct {
	s          *Store
	dependency string
	tag        string   // the hash tag of its keys, and its name in published changes
	keys       []string // the state hash, the set of half-open permits
	args       []any    // threshold, window, delay ms, probes, permit TTL ms, state TTL ms
	local      circuitbreaker.CircuitBreaker[string]
	inARow     bool // failures count in a row, not within a window

	mu        sync.Mutex
	state     circuitbreaker.State // the fleet's, as last learned
	epoch     int64                // its count of transitions; -1 before the first answer
	version   int64                // its count of changes, as last learned
	inc       string               // its incarnation, as last learned
	learned   time.Time            // when it was last learned
	gen       int64                // the subscription's generation it was learned under; -1: not live
	refresh   bool                 // a refresh of the state is running
	openUntil time.Time            // when an open state lets probes through, by this clock
	failures  uint                 // counted in the closed state
	outcomes  uint                 // outcomes counted in the closed state
	successes uint                 // probes that succeeded in the half-open state
	held      []permit             // half-open permits this replica holds, oldest first
	synced    int64                // the outage count when state was last learned
	seeded    int64                // the outage count when local was last set from state
	onLocal   bool                 // the last decision was the local breaker's
	onChange  func()               // tests: called with mu held after a published change is taken in
}

// permit is a half-open permit held in Redis.
type permit struct {
	id    string
	epoch int64
}

var _ circuitbreaker.CircuitBreaker[string] = (*Breaker)(nil)

// Dependency is the name of the dependency the breaker guards.
func (b *Breaker) Dependency() string { return b.dependency }

// Shared reports whether the breaker's last decision was the fleet's
// (true) or the local breaker's, because Redis was unavailable (false).
func (b *Breaker) Shared() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.onLocal
}

// ResultAgnostic marks the breaker as a policy for any result type.
func (*Breaker) ResultAgnostic() {}

// ToExecutor makes the breaker usable as a failsafe-go policy itself
// (failsafe.With(b)): every attempt asks for a permit, and every error
// counts as a failure. toolsafe does not use it: it drives the breaker
// itself, with its own rules (see Store.CircuitBreaker).
func (b *Breaker) ToExecutor(_ string) any {
	e := &executor{BaseExecutor: fspolicy.BaseExecutor[string]{BaseFailurePolicy: &fspolicy.BaseFailurePolicy[string]{}}, b: b}
	e.Executor = e
	return e
}

type executor struct {
	fspolicy.BaseExecutor[string]
	b *Breaker
}

func (e *executor) PreExecute(fspolicy.ExecutionInternal[string]) *common.PolicyResult[string] {
	if !e.b.TryAcquirePermit() {
		return &common.PolicyResult[string]{Error: circuitbreaker.ErrOpen, Done: true}
	}
	return nil
}

func (e *executor) OnSuccess(exec fspolicy.ExecutionInternal[string], result *common.PolicyResult[string]) {
	e.BaseExecutor.OnSuccess(exec, result)
	e.b.RecordSuccess()
}

func (e *executor) OnFailure(exec fspolicy.ExecutionInternal[string], result *common.PolicyResult[string]) *common.PolicyResult[string] {
	e.BaseExecutor.OnFailure(exec, result)
	e.b.RecordFailure()
	return result
}
