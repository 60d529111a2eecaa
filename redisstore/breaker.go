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
// every replica shares through Redis: the failures of all replicas open it
// for all, and at most b.Probes half-open probes run at once fleet-wide.
// Give it to every tool of the dependency, in every replica, with the same
// b; its CircuitBreaker field is a *Breaker. It returns an error for an
// empty dependency, a b that Breaker.Validate refuses, or a Window larger
// than MaxBreakerWindow.
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
	keys := s.breakerKeys(dependency)
	br := &Breaker{
		s:          s,
		dependency: dependency,
		tag:        tag,
		keys:       keys,
		scope:      s.health.watch(keys[0]),
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
// state is kept in Redis and shared by every replica (Store.CircuitBreaker
// adopts it for toolsafe). State and the other readers answer from what
// this replica last learned; permits and outcomes ask Redis, one bounded
// operation each; while Redis is unavailable a local breaker of the same
// settings answers. A probe that outlives the permit TTL (WithPermitTTL,
// 10s) loses its fleet permit: keep it above the tools' attempt timeouts.
// It is safe for concurrent use; the zero Breaker cannot be used.
type Breaker struct {
	s          *Store
	dependency string
	tag        string   // its name in published changes: "{breaker:DEP}"
	keys       []string // the state hash, the set of half-open permits
	scope      *scope   // the outages of its keys' shard
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
