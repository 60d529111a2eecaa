package redisstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/approval"
)

// What an operator's gauges read (package otelhook, Hook.Observe): a
// breaker's state, the grants' backlog, a budget's room, the Store's
// reach. Fleet tells the gauges that the state is the fleet's, the same on
// every replica.

// Fleet reports true: the breaker's state is the fleet's (otelhook's
// gauges label it toolsafe.scope="fleet").
func (*Breaker) Fleet() bool { return true }

// Fleet reports true: the grants are the fleet's.
func (*Grants) Fleet() bool { return true }

// Fleet reports true: the budget is the fleet's.
func (*Budget) Fleet() bool { return true }

// Backlog returns, per tool, how many requests wait for a decision on any
// replica and since when the oldest, ordered by tool name (see
// approval.Backlog): one read of Redis, as Requests, but of every request
// Redis keeps, not only the newest MaxPending that Requests lists (a
// backlog that outgrew MaxPending is when its oldest matters). While Redis
// is unavailable it returns an error wrapping ErrUnavailable without
// trying (and counts no refusal): a gauge shows nothing rather than zero.
func (g *Grants) Backlog(ctx context.Context) ([]approval.Backlog, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	if !g.s.Available() {
		return nil, fmt.Errorf("%w (the backlog is read once it answers again)", ErrUnavailable)
	}
	ls, err := g.listAll(ctx)
	if err != nil {
		return nil, err
	}
	var out []approval.Backlog
	for _, l := range ls {
		since := fromMillis(l.since)
		i := slices.IndexFunc(out, func(b approval.Backlog) bool { return b.Tool == l.call.Tool })
		if i < 0 {
			out = append(out, approval.Backlog{Tool: l.call.Tool, Requests: 1, Oldest: since})
			continue
		}
		out[i].Requests++
		if since.Before(out[i].Oldest) {
			out[i].Oldest = since
		}
	}
	now := time.Now() // a request's time is its lister's clock: another replica's may differ
	for i := range out {
		out[i].Age = max(now.Sub(out[i].Oldest), time.Nanosecond)
	}
	slices.SortFunc(out, func(a, b approval.Backlog) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// Remaining returns how many retries the budget would admit now: over the
// fleet's window, read from Redis in one script, or, while Redis is
// unavailable, over this replica's own counts, as Admit then decides. A
// ratio of 1 admits any number: math.MaxInt32. It returns an error
// wrapping ErrUnavailable when the read fails (the next one decides
// locally until Redis answers).
func (b *Budget) Remaining(ctx context.Context) (int, error) {
	now := b.bucket()
	if !b.s.health.available(b.keys[0]) { // the budget's own shard
		b.mu.Lock()
		attempts, retries := b.seen.sum(now)
		b.mu.Unlock()
		return remaining(retries, attempts, b.ratio, b.s.cfg.minRetries), nil
	}
	var counts []int64
	err := b.s.do(ctx, opRemaining, b.keys[0], func(ctx context.Context) error {
		var err error
		counts, err = budgetReadScript.Run(ctx, b.s.client, b.keys, b.args[0], b.args[1]).Int64Slice()
		return err
	})
	if err != nil {
		return 0, err
	}
	if len(counts) != 2 {
		return 0, fmt.Errorf("redisstore: budget %s: the window read %d numbers from Redis; want 2", b.dependency, len(counts))
	}
	return remaining(counts[1], counts[0], b.ratio, b.s.cfg.minRetries), nil
}

// remaining is how many more retries admits allows: the most k with which
// retries+k stay at most min, or at most ratio of all attempts
// (firsts+retries+k).
func remaining(retries, firsts int64, ratio float64, min int) int {
	if ratio >= 1 {
		return math.MaxInt32
	}
	left := int64(min) - retries
	// retries+k <= ratio*(firsts+retries+k)  ⇔  retries+k <= ratio*firsts/(1-ratio)
	if byRatio := int64(math.Floor(ratio*float64(firsts)/(1-ratio)+1e-9)) - retries; byRatio > left {
		left = byRatio
	}
	return int(max(left, 0))
}

// budgetReadScript reads a budget's window (see budgetScript) without
// changing it. ARGV: bucket ms, buckets. It returns the window's first
// attempts and retries.
var budgetReadScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local width, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local cur = math.floor(now / width)
local sa, sr = 0, 0
for i = 0, n - 1 do
  local v = redis.call('HMGET', KEYS[1], 'b' .. i, 'a' .. i, 'r' .. i)
  local b = tonumber(v[1]) or -1
  if b > cur - n and b <= cur then
    sa, sr = sa + (tonumber(v[2]) or 0), sr + (tonumber(v[3]) or 0)
  end
end
return {sa, sr}
`)
