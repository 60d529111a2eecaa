package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/common"
	fspolicy "github.com/failsafe-go/failsafe-go/policy"
	"github.com/redis/go-redis/v9"

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

// breakerScript keeps one breaker's state in a hash (KEYS[1]): s the state
// (0 closed, 1 open, 2 half-open), e a count of transitions, u when an
// open breaker lets probes through (ms, Redis's clock), f failures in a
// row, w the last outcomes ('1' a failure) when counting within a window,
// k the probes that succeeded, v a count of changes and i a random name
// of this incarnation of the hash (a hash lost and made again counts its
// changes from zero again). The half-open permits are a sorted set
// (KEYS[2]) of IDs scored by when they expire. ARGV: op (acquire, success,
// failure, release, open, close, halfopen, peek), threshold, window (0: in a row),
// delay ms, probes, permit TTL ms, state TTL ms, permit ID, permit epoch,
// a new incarnation's name, the channel of changes, the breaker's tag. It
// returns {granted, s, e, ms until half-open, failures, outcomes,
// successes, v, i}, and publishes every change it makes on the channel:
// the tag, then the same values but granted, separated by spaces.
var breakerScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', KEYS[1], 's', 'e', 'u', 'f', 'w', 'k', 'v', 'i')
local s = tonumber(h[1]) or 0
local e = tonumber(h[2]) or 0
local u = tonumber(h[3]) or 0
local f = tonumber(h[4]) or 0
local w = h[5] or ''
local k = tonumber(h[6]) or 0
local v = tonumber(h[7]) or 0
local inc = h[8] or ''
local op = ARGV[1]
local T, W, D, P = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local pttl, sttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local id, pe = ARGV[8], tonumber(ARGV[9])
local dirty, granted = false, 0

local function to(state)
  s, e, f, w, k, dirty = state, e + 1, 0, '', 0, true
  if state == 1 then u = now + D else u = 0 end
  redis.call('DEL', KEYS[2])
end

if op == 'acquire' then
  if s == 1 and now >= u then to(2) end
  if s == 0 then
    granted = 1
  elseif s == 2 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
    if redis.call('ZCARD', KEYS[2]) < P then
      redis.call('ZADD', KEYS[2], now + pttl, id)
      redis.call('PEXPIRE', KEYS[2], pttl)
      granted = 1
    end
  end
elseif op == 'success' or op == 'failure' then
  local probe = false
  if id ~= '' and redis.call('ZREM', KEYS[2], id) == 1 then probe = (s == 2 and pe == e) end
  if s == 0 then
    if W > 0 then
      w = w .. (op == 'failure' and '1' or '0')
      if #w > W then w = string.sub(w, #w - W + 1) end
      dirty = true
      local _, n = string.gsub(w, '1', '')
      if n >= T then to(1) end
    elseif op == 'failure' then
      f, dirty = f + 1, true
      if f >= T then to(1) end
    elseif f ~= 0 then
      f, dirty = 0, true
    end
  elseif s == 2 and probe then
    if op == 'failure' then
      to(1)
    else
      k, dirty = k + 1, true
      if k >= P then to(0) end
    end
  end
elseif op == 'release' then
  if id ~= '' then redis.call('ZREM', KEYS[2], id) end
elseif op == 'open' then to(1)
elseif op == 'close' then to(0)
elseif op == 'halfopen' then to(2)
end

local rem = 0
if s == 1 and u > now then rem = u - now end
local failures, outcomes = f, f
if W > 0 then
  local _, n = string.gsub(w, '1', '')
  failures, outcomes = n, #w
end
if dirty then
  v = v + 1
  if inc == '' then inc = ARGV[10] end
  redis.call('HSET', KEYS[1], 's', s, 'e', e, 'u', u, 'f', f, 'w', w, 'k', k, 'v', v, 'i', inc)
  local ttl = sttl
  if s == 1 and u - now + pttl > ttl then ttl = u - now + pttl end
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PUBLISH', ARGV[11], table.concat({ARGV[12], s, e, rem, failures, outcomes, k, v, inc}, ' '))
end
return {granted, s, e, rem, failures, outcomes, k, v, inc}
`)

// answer is what breakerScript returns.
type answer struct {
	granted            bool
	state              circuitbreaker.State
	epoch              int64
	remaining          time.Duration
	failures, outcomes uint
	successes          uint
	version            int64  // the hash's count of changes
	inc                string // its incarnation; "" before its first change
	received           time.Time
	gen                int64 // the subscription's generation it is trusted under; -1: none
}

// run runs breakerScript for op with permit p (zero for none). The
// answer's gen is the subscription's generation it can be trusted under,
// -1 when the subscription was not live throughout.
func (b *Breaker) run(op string, kind operation, p permit) (answer, error) {
	live0, gen0 := b.s.changes.live()
	a, err := b.runScript(op, kind, p)
	if live1, gen1 := b.s.changes.live(); live0 && live1 && gen0 == gen1 {
		a.gen = gen0
	} else {
		a.gen = -1
	}
	return a, err
}

func (b *Breaker) runScript(op string, kind operation, p permit) (answer, error) {
	var res []any
	err := b.s.do(context.Background(), kind, func(ctx context.Context) error {
		args := make([]any, 0, 12)
		args = append(args, op)
		args = append(args, b.args...)
		args = append(args, p.id, p.epoch, b.s.incarnation, b.s.changes.channel, b.tag)
		var err error
		res, err = breakerScript.Run(ctx, b.s.client, b.keys, args...).Slice()
		return err
	})
	if err != nil {
		return answer{}, err
	}
	var n [8]int64
	ok := len(res) == 9
	for i := 0; ok && i < 8; i++ {
		n[i], ok = res[i].(int64)
	}
	inc, isString := "", false
	if ok {
		inc, isString = res[8].(string)
	}
	if !ok || !isString {
		return answer{}, fmt.Errorf("redisstore: the breaker script answered %v", res)
	}
	a := answer{
		granted:   n[0] == 1,
		state:     circuitbreaker.State(n[1]),
		epoch:     n[2],
		remaining: time.Duration(n[3]) * time.Millisecond,
		failures:  uint(n[4]),
		outcomes:  uint(n[5]),
		successes: uint(n[6]),
		version:   n[7],
		inc:       inc,
		received:  time.Now(),
	}
	return a, nil
}

// learnLocked takes in what Redis answered, unless an answer of a later
// epoch came first; an outage since the last answer forgets the permits
// held (Redis may have lost them, or let them expire) and the epoch (a
// restarted Redis counts again from zero).
func (b *Breaker) learnLocked(a answer) {
	if n := b.s.health.outages.Load(); n != b.synced {
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
	if n := b.s.health.outages.Load(); n != b.seeded {
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

// TryAcquirePermit asks the fleet's breaker for a permit: granted when
// closed, refused while open, and while half-open granted while fewer than
// Probes permits are out fleet-wide (an open breaker whose delay is over
// turns half-open here). The permit is given back by RecordSuccess,
// RecordFailure or ReleasePermit. When Redis is unavailable, the local breaker answers.
//
// It answers without asking Redis when the state it last learned says
// open, before that state's delay is over (it cannot end sooner, but for
// Close or HalfOpen called by hand), or closed, while the Store's
// subscription to the breakers' changes has been live since the state was
// learned: every change of the state, made by the breaker script in any
// replica, is published, and reaches this replica about as soon as it is
// made. (The state is learned again in the background every half of the
// state's max age, WithStateMaxAge, a safety net.) So a healthy attempt,
// or one refused by an open breaker, waits for no Redis operation. While
// the subscription is not live, closed permits are asked of Redis too.
// Half-open permits always come from Redis.
func (b *Breaker) TryAcquirePermit() bool {
	b.mu.Lock()
	if b.cachedLocked() {
		now := time.Now()
		switch age := now.Sub(b.learned); {
		case b.state == circuitbreaker.OpenState && now.Before(b.openUntil):
			b.mu.Unlock()
			return false
		case b.state == circuitbreaker.ClosedState && age < b.s.cfg.maxAge && b.trustedLocked():
			if age >= b.s.cfg.maxAge/2 && !b.refresh {
				b.refresh = true
				if !b.s.async(b.refreshState) {
					b.refresh = false
				}
			}
			b.mu.Unlock()
			return true
		}
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

// cachedLocked reports whether the state last learned is the fleet's as
// of now, but for its age: learned from Redis since the last outage, and
// Redis available.
func (b *Breaker) cachedLocked() bool {
	return b.epoch >= 0 && !b.onLocal && b.synced == b.s.health.outages.Load() && b.s.Available()
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
	if b.s.health.outages.Load() == b.synced && len(b.held) > 0 {
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
	if b.s.health.outages.Load() != b.synced || len(b.held) == 0 {
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
