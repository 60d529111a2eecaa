package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/redis/go-redis/v9"
)

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
	err := b.s.do(context.Background(), kind, b.keys[0], func(ctx context.Context) error {
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
