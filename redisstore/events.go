package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/approval"
)

// dropPending is the Lua of decideScript that drops the pending requests
// ms (members and their numbers, as ZRANGE WITHSCORES answers them) from
// a full list of at most max: each goes to the audit trail's dropped
// events (KEYS[9], kept ARGV[8] ms and at most ARGV[9]), its input cut to
// ARGV[10] bytes, and the group's overflow (KEYS[8]) counts them, in the
// same script, so a drop is counted and named exactly when it happens.
const dropPending = `
local function cut(s, n)
  if type(s) ~= 'string' or #s <= n then return s end
  local i = n
  while i > 0 do
    local b = string.byte(s, i + 1)
    if b < 128 or b >= 192 then break end -- not inside a character
    i = i - 1
  end
  return string.sub(s, 1, i)
end
local function drop(ms, max)
  local keep, cap, bytes = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local members = {}
  for i = 1, #ms, 2 do
    local m = ms[i]
    members[#members + 1] = m
    local info = redis.call('HGET', KEYS[4], m)
    if info then
      local c = cjson.decode(info)
      local size = #(c.Input or '')
      c.Input, c.CanonicalInput = cut(c.Input, bytes), cut(c.CanonicalInput, bytes)
      local ev = '{"kind":"dropped","at_ms":' .. now .. ',"since_ms":' .. (redis.call('HGET', KEYS[6], m) or '0') ..
        ',"max":' .. max .. ',"input_size":' .. size .. ',"request_id":"' .. ms[i + 1] .. '.' .. m .. '.' .. redis.sha1hex(info) ..
        '","call":' .. cjson.encode(c) .. '}'
      redis.call('ZADD', KEYS[9], now, ev)
    end
  end
  forget(members)
  redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', now - keep)
  local n = redis.call('ZCARD', KEYS[9])
  if n > cap then redis.call('ZREMRANGEBYRANK', KEYS[9], 0, n - cap - 1) end
  if n > 0 then redis.call('PEXPIRE', KEYS[9], keep) end
  redis.call('HINCRBY', KEYS[8], 'dropped', #members)
  redis.call('HSETNX', KEYS[8], 'since_ms', now)
  redis.call('HSET', KEYS[8], 'last_ms', now, 'max', max)
  redis.call('PEXPIRE', KEYS[8], keep)
end
`

// overflowScript answers what the group's full list dropped (how many,
// since and last, ms, and its cap then) and how many requests wait in it.
var overflowScript = redis.NewScript(forgetExpired + `
local o = redis.call('HMGET', KEYS[8], 'dropped', 'since_ms', 'last_ms', 'max')
return {o[1] or '0', o[2] or '0', o[3] or '0', o[4] or '0', redis.call('ZCARD', KEYS[2])}
`)

// refusalScript adds the refusal ARGV[1] (JSON, without its time) to the
// audit trail's refusals KEYS[1], kept ARGV[2] ms and at most ARGV[3], and
// answers it with its time.
var refusalScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ev = '{"at_ms":' .. now .. ',' .. string.sub(ARGV[1], 2)
local keep, cap = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ev)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local n = redis.call('ZCARD', KEYS[1])
if n > cap then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1) end
redis.call('PEXPIRE', KEYS[1], keep)
return ev
`)

// eventsScript drops the events of KEYS[1] and KEYS[2] (refusals, dropped
// requests) older than ARGV[1] ms and answers at most ARGV[2] of each of
// the others (0: all), newest first.
var eventsScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - tonumber(ARGV[1]))
  out[i] = redis.call('ZREVRANGE', KEYS[i], 0, tonumber(ARGV[2]) - 1)
end
return out
`)

// Overflow returns what the full lists of pending requests dropped on any
// replica (approval.Overflow): how many in all, when the first and the
// latest were dropped, and the cap: the MaxPending of the replica that
// dropped the latest (this Grants' when none was dropped). Redis keeps up
// to MaxPending requests in each of the 16 groups they are spread over,
// and drops the oldest of a group that is full; Requests lists the newest
// MaxPending (this Grants') of all, and Unlisted says how many more wait
// unlisted. The
// count of a group lives as long as AuditTTL (30 days) after its latest
// drop, as the dropped requests' events do (Events). It reads each group,
// one script each, and returns an error wrapping ErrUnavailable when Redis
// is unavailable.
func (g *Grants) Overflow(ctx context.Context) (approval.Overflow, error) {
	o := approval.Overflow{Max: g.maxPending()}
	if g.s == nil {
		return o, errNoStore
	}
	waiting, dropMax := 0, 0
	for _, base := range g.groups() {
		var raw []any
		err := g.s.do(ctx, opPending, base+":pending", func(ctx context.Context) error {
			var err error
			raw, err = overflowScript.Run(ctx, g.s.client, append(grantKeys(base, ""), overflowKey(base))).Slice()
			return err
		})
		if err != nil {
			g.s.health.refused(stateGrants)
			return approval.Overflow{Max: o.Max}, err
		}
		if len(raw) != 5 {
			return approval.Overflow{Max: o.Max}, fmt.Errorf("redisstore: the overflow of a group in Redis is not valid: %d values", len(raw))
		}
		dropped, _ := strconv.Atoi(fmt.Sprint(raw[0]))
		since, last := fromMillis(fmt.Sprint(raw[1])), fromMillis(fmt.Sprint(raw[2]))
		capped, _ := strconv.Atoi(fmt.Sprint(raw[3]))
		n, _ := raw[4].(int64)
		waiting += int(n)
		if dropped <= 0 {
			continue
		}
		o.Dropped += dropped
		if o.Since.IsZero() || since.Before(o.Since) {
			o.Since = since
		}
		if !last.Before(o.Last) {
			o.Last, dropMax = last, capped
		}
	}
	o.Unlisted = max(0, waiting-o.Max)
	if dropMax > 0 {
		o.Max = dropMax
	}
	return o, nil
}

var _ interface {
	Overflow(context.Context) (approval.Overflow, error)
	RecordRefusal(context.Context, approval.Request, string, string) (approval.Event, error)
	Events(context.Context, int) ([]approval.Event, error)
} = (*Grants)(nil) // package inbox's Overflower and EventStore

// RecordRefusal adds to the audit trail in Redis that by was refused when
// they tried action ("decide", "open") on req, a request they may not
// decide, and returns the event, timed by Redis's clock as answers are.
// It is kept in the group of req's tool and input, as AuditTTL and
// MaxAudit say, apart from the answers and from the dropped requests: a
// flood of either never pushes a refusal out. The call's input is cut to
// approval.EventInputBytes. It returns an error wrapping ErrUnavailable
// when Redis is unavailable (the refusal was then recorded, or not).
func (g *Grants) RecordRefusal(ctx context.Context, req approval.Request, by, action string) (approval.Event, error) {
	if g.s == nil {
		return approval.Event{}, errNoStore
	}
	c, size := approval.CutForEvent(req.Call)
	ev, err := json.Marshal(storedEvent{Kind: string(approval.EventRefused), SinceMS: req.Since.UnixMilli(), By: by, Action: action,
		RequestID: req.ID, InputSize: size, Call: c})
	if err != nil {
		return approval.Event{}, fmt.Errorf("redisstore: %w", err)
	}
	key := refusalsKey(g.groupOf(toolInput(req.Call.Tool, req.Call.Input)))
	var rec string
	err = g.s.do(ctx, opAudit, key, func(ctx context.Context) error {
		var err error
		rec, err = refusalScript.Run(ctx, g.s.client, []string{key}, ev, g.auditTTL().Milliseconds(), g.maxAudit()).Text()
		return err
	})
	if err != nil {
		g.s.health.refused(stateGrants)
		return approval.Event{}, err
	}
	return decodeEvent(rec)
}

// Events returns the events of the audit trail in Redis (approval.Event:
// refusals, and requests a full list dropped), newest first, at most
// limit of them; limit ≤ 0 means all, at most MaxAudit of each kind. Audit
// lists the answers, as it always did. It reads each of the 16 groups,
// one script each, and returns an error wrapping ErrUnavailable when
// Redis is unavailable.
func (g *Grants) Events(ctx context.Context, limit int) ([]approval.Event, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	var refusals, drops []approval.Event
	for _, base := range g.groups() {
		keys := []string{refusalsKey(base), droppedKey(base)}
		var raw []any
		err := g.s.do(ctx, opAudit, keys[0], func(ctx context.Context) error {
			var err error
			raw, err = eventsScript.Run(ctx, g.s.client, keys, g.auditTTL().Milliseconds(), max(limit, 0)).Slice()
			return err
		})
		if err != nil {
			g.s.health.refused(stateGrants)
			return nil, err
		}
		for i, into := range []*[]approval.Event{&refusals, &drops} {
			if i >= len(raw) {
				break
			}
			list, _ := raw[i].([]any)
			for _, s := range list {
				str, _ := s.(string)
				e, err := decodeEvent(str)
				if err != nil {
					return nil, err
				}
				*into = append(*into, e)
			}
		}
	}
	newestFirst := func(a, b approval.Event) int { return b.At.Compare(a.At) }
	n := g.maxAudit()
	if limit > 0 {
		n = min(n, limit)
	}
	var out []approval.Event
	for _, es := range [][]approval.Event{refusals, drops} {
		slices.SortStableFunc(es, newestFirst)
		out = append(out, es[:min(len(es), n)]...)
	}
	slices.SortStableFunc(out, newestFirst)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// storedEvent is an event as Redis keeps it.
type storedEvent struct {
	Kind      string            `json:"kind"`
	AtMS      int64             `json:"at_ms,omitempty"` // set by the script, first
	SinceMS   int64             `json:"since_ms"`
	By        string            `json:"by,omitempty"`
	Action    string            `json:"action,omitempty"`
	RequestID string            `json:"request_id"`
	Max       int               `json:"max,omitempty"`
	InputSize int               `json:"input_size"`
	Call      approval.CallInfo `json:"call"`
}

func decodeEvent(s string) (approval.Event, error) {
	var e storedEvent
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return approval.Event{}, fmt.Errorf("redisstore: an event of the audit trail in Redis is not valid: %w", err)
	}
	var since time.Time
	if e.SinceMS > 0 {
		since = time.UnixMilli(e.SinceMS)
	}
	return approval.Event{Kind: approval.EventKind(e.Kind), At: time.UnixMilli(e.AtMS), By: e.By, Action: e.Action, RequestID: e.RequestID,
		Since: since, Call: withCanonical(e.Call), InputSize: e.InputSize, Max: e.Max}, nil
}
