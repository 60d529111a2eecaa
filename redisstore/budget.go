package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/policy"
)

// budgetBuckets is how many buckets a retry budget's window is kept in.
const budgetBuckets = 10

// flushInterval is how often, at most, a retry budget sends the first
// attempts it counted to Redis when no retry carries them sooner: 100ms.
const flushInterval = 100 * time.Millisecond

// RetryBudget returns the retry budget of the dependency named dependency,
// shared by every replica: a retry is admitted while the fleet's retries
// over the last window (WithBudgetWindow, 10s) are at most ratio of all its
// attempts, retries included, or fewer than WithBudgetMinRetries (3); 0.2
// allows one retry per four first attempts. Use it as policy.Retry.Shared in
// every replica. A first attempt never waits for Redis (its count is sent
// within 100 ms); a retry waits for one script. It returns an error
// for an empty name or a ratio outside (0, 1]; the budget is a *Budget.
func (s *Store) RetryBudget(dependency string, ratio float64) (policy.SharedBudget, error) {
	b, err := s.NewBudget(dependency, ratio)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// NewBudget is RetryBudget with the concrete type.
func (s *Store) NewBudget(dependency string, ratio float64) (*Budget, error) {
	if dependency == "" {
		return nil, errors.New("redisstore: a shared retry budget needs the name of its dependency")
	}
	if !(ratio > 0 && ratio <= 1) {
		return nil, fmt.Errorf("redisstore: retry budget %s: ratio %v is outside (0, 1]: it is the largest share of attempts that may be retries, such as 0.2", dependency, ratio)
	}
	width := s.cfg.window / budgetBuckets
	return &Budget{
		s:          s,
		dependency: dependency,
		ratio:      ratio,
		keys:       []string{s.budgetKey(dependency)},
		width:      width,
		args: []any{width.Milliseconds(), budgetBuckets, ratio, s.cfg.minRetries,
			(2 * s.cfg.window).Milliseconds()},
		base:    time.Now(),
		seen:    newRing(),
		pending: newRing(),
	}, nil
}

// Budget is a retry budget kept in Redis and shared by every replica (see
// Store.RetryBudget). It implements policy.SharedBudget and is safe for
// concurrent use. Make one with Store.RetryBudget or Store.NewBudget; the
// zero Budget has no Store and cannot be used.
type Budget struct {
	s          *Store
	dependency string
	ratio      float64
	keys       []string
	width      time.Duration
	args       []any // bucket ms, buckets, ratio, minimum, TTL ms
	base       time.Time

	mu       sync.Mutex
	seen     ring // this replica's attempts and retries in the window
	pending  ring // those not sent to Redis yet
	lastSent time.Time
	flushing bool // a flush is running
	onLocal  bool
}

var _ policy.SharedBudget = (*Budget)(nil)

// Dependency is the name of the dependency the budget belongs to.
func (b *Budget) Dependency() string { return b.dependency }

// Shared reports whether the budget's last decision was the fleet's
// (true) or this replica's alone, because Redis was unavailable (false).
func (b *Budget) Shared() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.onLocal
}

// Admit counts an attempt as it begins. A first attempt (retry false) is
// always admitted. A retry is admitted while the fleet's retries in the
// window, this one included, are at most the minimum or at most ratio of
// its attempts; an admitted retry is counted, a refused one is not. It
// takes at most the Store's timeout, whatever Redis does.
func (b *Budget) Admit(ctx context.Context, retry bool) bool {
	ctx = context.WithoutCancel(ctx) // an operation half done is worse than one bounded by the timeout
	now := b.bucket()
	if !retry {
		b.mu.Lock()
		b.seen.add(now, 1, 0)
		b.pending.add(now, 1, 0)
		if b.flushing || time.Since(b.lastSent) < flushInterval || !b.s.health.available(b.keys[0]) {
			b.mu.Unlock()
			return true
		}
		b.flushing, b.lastSent = true, time.Now()
		out := b.pending.take(now)
		b.mu.Unlock()
		// The attempts go to Redis in the background: the call does not wait.
		if !b.s.async(func() { b.flush(ctx, now, out) }) {
			b.flush(ctx, now, out)
		}
		return true
	}

	b.mu.Lock()
	out := b.pending.take(now)
	b.mu.Unlock()
	admitted, err := b.send(ctx, opAdmit, now, out, true)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.unsentLocked(now, out)
		b.onLocal = true
		b.s.health.decidedLocally(stateBudget)
		a, r := b.seen.sum(now)
		admitted = admits(r, a, b.ratio, b.s.cfg.minRetries)
		if admitted {
			b.seen.add(now, 0, 1)
			b.pending.add(now, 0, 1)
		}
		return admitted
	}
	b.onLocal = false
	b.lastSent = time.Now()
	if admitted {
		b.seen.add(now, 0, 1)
	}
	return admitted
}

// flush sends counts to Redis, or puts them back when it cannot.
func (b *Budget) flush(ctx context.Context, now int64, out []int64) {
	_, err := b.send(ctx, opFlush, now, out, false)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushing = false
	if err != nil {
		b.unsentLocked(now, out)
	}
}

// admits is the rule: retries, the next one included, are at most min or
// at most ratio of all attempts, the next one included.
func admits(retries, firsts int64, ratio float64, min int) bool {
	next := retries + 1
	return next <= int64(min) || float64(next) <= ratio*float64(firsts+next)
}

// unsentLocked puts counts whose operation failed back among the pending
// ones, to be sent once Redis answers again. An operation that timed out
// after Redis ran it has its counts sent twice: at most one batch (the
// attempts of flushInterval on one replica) counted twice, which loosens
// the budget by as much, once per outage.
func (b *Budget) unsentLocked(now int64, out []int64) {
	for i := 0; i+2 < len(out); i += 3 {
		b.pending.add(now-out[i], out[i+1], out[i+2])
	}
}

// bucket is the number of the current bucket on this replica's clock.
func (b *Budget) bucket() int64 { return int64(time.Since(b.base) / b.width) }

// budgetScript keeps a budget's window in a hash (KEYS[1]) of ten buckets
// by their number modulo ten: b<i> the bucket's number (its start on
// Redis's clock, in buckets), a<i> its attempts, r<i> its retries. ARGV:
// bucket ms, buckets, ratio, minimum of retries, retry (1: ask for one),
// TTL ms, then for each bucket of counts sent: its age in buckets, its
// attempts, its retries. It returns 1 when the retry is admitted.
var budgetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local cur = math.floor(now / width)
local names = {}
for i = 0, n - 1 do
  names[#names + 1] = 'b' .. i
  names[#names + 1] = 'a' .. i
  names[#names + 1] = 'r' .. i
end
local v = redis.call('HMGET', KEYS[1], unpack(names))
local B, A, R, changed = {}, {}, {}, {}
for i = 0, n - 1 do
  B[i] = tonumber(v[3 * i + 1]) or -1
  A[i] = tonumber(v[3 * i + 2]) or 0
  R[i] = tonumber(v[3 * i + 3]) or 0
end
local function add(bucket, a, r)
  if bucket <= cur - n or bucket > cur then return end
  local i = bucket % n
  if B[i] ~= bucket then B[i], A[i], R[i] = bucket, 0, 0 end
  A[i], R[i], changed[i] = A[i] + a, R[i] + r, true
end
for j = 7, #ARGV, 3 do
  add(cur - tonumber(ARGV[j]), tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]))
end
local admitted = 0
if ARGV[5] == '1' then
  local sa, sr = 0, 0
  for i = 0, n - 1 do
    if B[i] > cur - n and B[i] <= cur then sa, sr = sa + A[i], sr + R[i] end
  end
  local nextr = sr + 1
  if nextr <= tonumber(ARGV[4]) or nextr <= tonumber(ARGV[3]) * (sa + nextr) then
    admitted = 1
    add(cur, 0, 1)
  end
end
local fields = {}
for i, _ in pairs(changed) do
  fields[#fields + 1] = 'b' .. i; fields[#fields + 1] = B[i]
  fields[#fields + 1] = 'a' .. i; fields[#fields + 1] = A[i]
  fields[#fields + 1] = 'r' .. i; fields[#fields + 1] = R[i]
end
if #fields > 0 then
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))
end
return admitted
`)

// send runs budgetScript with the counts in out (triples of age, attempts,
// retries); with retry it asks for a retry and reports whether it was
// admitted.
func (b *Budget) send(ctx context.Context, op operation, now int64, out []int64, retry bool) (bool, error) {
	if len(out) == 0 && !retry {
		return false, nil
	}
	var admitted int64
	err := b.s.do(ctx, op, b.keys[0], func(ctx context.Context) error {
		args := make([]any, 0, len(b.args)+1+len(out))
		args = append(args, b.args[:4]...)
		if retry {
			args = append(args, 1)
		} else {
			args = append(args, 0)
		}
		args = append(args, b.args[4])
		for _, v := range out {
			args = append(args, v)
		}
		var err error
		admitted, err = budgetScript.Run(ctx, b.s.client, b.keys, args...).Int64()
		return err
	})
	return admitted == 1, err
}

// ring is a window of buckets of counts by bucket number modulo its
// length.
type ring []slot

type slot struct{ n, attempts, retries int64 }

func newRing() ring {
	r := make(ring, budgetBuckets)
	for i := range r {
		r[i].n = math.MinInt64
	}
	return r
}

func (r ring) add(n, attempts, retries int64) {
	if n < 0 {
		return
	}
	s := &r[n%int64(len(r))]
	if s.n != n {
		*s = slot{n: n}
	}
	s.attempts += attempts
	s.retries += retries
}

// live reports whether the slot holds counts of the window that ends with
// bucket now.
func (r ring) live(s slot, now int64) bool { return s.n > now-int64(len(r)) && s.n <= now }

// sum returns the attempts (first ones) and retries of the window.
func (r ring) sum(now int64) (attempts, retries int64) {
	for _, s := range r {
		if r.live(s, now) {
			attempts += s.attempts
			retries += s.retries
		}
	}
	return attempts, retries
}

// take empties r and returns its counts of the window as triples of age,
// attempts, retries.
func (r ring) take(now int64) []int64 {
	var out []int64
	for i, s := range r {
		if r.live(s, now) && (s.attempts > 0 || s.retries > 0) {
			out = append(out, now-s.n, s.attempts, s.retries)
		}
		r[i] = slot{n: math.MinInt64}
	}
	return out
}
