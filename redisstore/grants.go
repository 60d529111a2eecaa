package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"

	"github.com/redis/go-redis/v9"
)

// DefaultMaxDecisions is how many grants and denials may wait for one tool
// and input at once: 100. Grant and Deny refuse more.
const DefaultMaxDecisions = 100

// Grants returns an approver whose grants, denials and pending requests
// are kept in Redis, so a grant given through one replica is used by the
// call of another (see Grants).
func (s *Store) Grants() *Grants { return &Grants{s: s} }

// Grants is approval.Grants for a fleet: a approval.Approver whose
// decisions live in Redis, with the same rules. A request is one tool, one
// canonical input and one run (outside a run, one call ID; see
// approval.CallInfo.RequestKey): two runs waiting on the same tool and
// input are two requests, and an Answer is used only by a call of the
// request it names. A Grant or Deny is bound to one tool and its canonical
// input, whatever the run. Each is used up by one call, oldest first, an
// Answer for the call's own request before a Grant; undecided calls are
// listed by Pending. Each method is one atomic script, bounded by the
// Store's timeout and ctx; while Redis is unavailable it fails closed with
// ErrUnavailable (the call pauses; no approval is assumed). Make one with
// Store.Grants and set its fields before its first use, the same in every
// replica. A Grants is safe for concurrent use.
type Grants struct {
	// TTL is how long a decision waits to be used, and a pending request to
	// be decided; zero means approval.DefaultGrantTTL (1 hour).
	TTL time.Duration
	// MaxPending caps the pending requests listed, the oldest dropped
	// first; zero means approval.DefaultMaxPending (1,000). Redis keeps at
	// most as many in each of the 16 groups the requests are spread over,
	// and Pending lists the newest MaxPending of all. Overflow counts what
	// a full group dropped and how many wait unlisted; Events names each
	// request dropped. At most
	// DefaultMaxDecisions decisions wait for one tool and input.
	MaxPending int
	// AuditTTL is how long the record of an Answer, and an event (Events),
	// is kept; zero means approval.DefaultAuditTTL (30 days). Keep it the
	// same in every replica.
	AuditTTL time.Duration
	// MaxAudit caps the records of Answer kept, the oldest dropped first,
	// and apart from them the events of each kind; zero means
	// approval.DefaultMaxAudit (10,000). Redis keeps at most as many in each
	// of the 16 groups, and Audit and Events list the newest of all.
	MaxAudit int
	// ReadOldKeys makes the Grants also use what a redisstore before the
	// keys' hash tags held the prefix kept, all in one hash slot
	// ("PREFIX:{grants}:..."): Decide uses its decisions first (and leaves a
	// request pending there as it is), Requests and Pending list its
	// requests (their IDs begin with "old-"), Answer decides them where they
	// are, Revoke takes back its decisions too, and Audit lists its records.
	// Grant, Deny and new requests go to the new keys. Set it in every
	// replica while a replica of the older version runs, and for TTL (1
	// hour) after the last one stopped: nothing that could still be used is
	// left in the old keys then (the README's "Moving to the keys of a
	// Redis Cluster"). It costs each Decide one more script.
	ReadOldKeys bool
	// Quorum is, per tool name, how many distinct people must approve a
	// request of that tool (Reply, Answer) before its call may run: 2 means
	// two people. A tool not in it, or with a value below 2, needs one.
	// Grant and Deny, given by the program, are not votes. Keep it the
	// same in every replica: the replica that records a vote counts it.
	Quorum map[string]int

	s   *Store
	old bool // tests: keep everything in the old keys, as the versions before did
}

var _ approval.Approver = (*Grants)(nil)

func (g *Grants) ttl() time.Duration {
	if g.TTL > 0 {
		return g.TTL
	}
	return approval.DefaultGrantTTL
}

func (g *Grants) maxPending() int {
	if g.MaxPending > 0 {
		return g.MaxPending
	}
	return approval.DefaultMaxPending
}

var errNoStore = errors.New("redisstore: these Grants were not made by Store.Grants")

// keys returns the keys of the decisions for tool and input, then those
// of the pending requests of its group (order, expiry, info, the old
// versions' count, since when), and the digest that names tool and input: the first half of
// the member that names a request in them (see member).
func (g *Grants) keys(tool, input string) ([]string, string) {
	ti := toolInput(tool, input)
	return grantKeys(g.groupOf(ti), ti), ti
}

// toolInput is the digest that names tool with its canonical input.
func toolInput(tool, input string) string {
	canon, err := canonical.JSON(input)
	if err != nil {
		canon = input
	}
	// The tool's length first: no NUL in a name can move where the tool
	// ends and the input begins.
	return digest(strconv.Itoa(len(tool)) + ":" + tool + canon)
}

// groupOf is the key base of the group of the digest ti.
func (g *Grants) groupOf(ti string) string {
	if g.old {
		return g.s.oldGrantGroup()
	}
	return g.s.grantGroup(ti)
}

// groups are the key bases of the groups the Grants lists: every group,
// then the old keys' one with ReadOldKeys.
func (g *Grants) groups() []string {
	if g.old {
		return []string{g.s.oldGrantGroup()}
	}
	out := g.s.grantGroupsAll()
	if g.ReadOldKeys {
		out = append(out, g.s.oldGrantGroup())
	}
	return out
}

// member names the request of call among the pending ones: the digest of
// its tool and input (32 hex digits), then that of its RequestKey (32
// more). A decision answered for it carries the second half.
func member(ti string, call approval.CallInfo) string {
	return ti + digest(call.RequestKey())
}

// forgetExpired is the Lua that drops the pending requests whose time is
// up; KEYS[2..4], KEYS[6] and KEYS[7] are the pending order, expiry,
// info, since and votes.
const forgetExpired = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function chunks(list, f) -- unpack takes a few thousand values at most
  for i = 1, #list, 500 do f({unpack(list, i, math.min(i + 499, #list))}) end
end
local function forget(members)
  chunks(members, function(c)
    redis.call('ZREM', KEYS[2], unpack(c))
    redis.call('ZREM', KEYS[3], unpack(c))
    redis.call('HDEL', KEYS[4], unpack(c))
    redis.call('HDEL', KEYS[6], unpack(c))
    redis.call('HDEL', KEYS[7], unpack(c))
  end)
end
forget(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now))
`

// decideScript uses up the oldest live decision of KEYS[1] answered for the
// request ARGV[1] (its second half) or the one named ARGV[5] (see
// approval.CallInfo.AnsweredAs), else the oldest given for any call, and
// answers its kind ('a', 'd', or for an answer with what a person added,
// 'e' approved with changes or 'm' denied with a message) followed by what
// was added, hex; or lists the request as pending and answers 'p'.
// ARGV: member, TTL ms, max pending, the request as JSON, the other
// request's half, "1" to use a decision only: a request not listed
// already is not listed, and the script answers 'n'; "1" when the
// caller can apply an approval with changes (Verdict): without it such a
// decision is left where it is, and the script answers 'E' when one waits
// for the request and nothing else could be used; then how long (ms) and
// how many events the audit trail keeps, for the requests a full list
// drops (see dropPending; KEYS[8] and KEYS[9]). A decision is
// "kind:expiry ms", then for an answer ":" and the request's half, then
// for 'e' and 'm' ":" and what was added, hex.
var decideScript = redis.NewScript(forgetExpired + dropPending + `
local mine, also = string.sub(ARGV[1], 33), ARGV[5]
local ds = redis.call('LRANGE', KEYS[1], 0, -1)
local bound, any, live, edited = nil, nil, 0, false
for i, d in ipairs(ds) do
  local kind, exp, req = string.match(d, '^(%a):(%d+):?(%x*)')
  if exp and tonumber(exp) > now then
    live = live + 1
    if not bound and req ~= '' and (req == mine or req == also) then
      if kind ~= 'e' or ARGV[7] == '1' then bound = i else edited = true end
    end
    if not any and req == '' then any = i end
  end
end
local take = bound or any
if take or live < #ds then
  local keep, last = {}, now
  for i, d in ipairs(ds) do
    local exp = tonumber(string.match(d, '^%a:(%d+)') or '0')
    if i ~= take and exp > now then
      keep[#keep + 1] = d
      if exp > last then last = exp end
    end
  end
  redis.call('DEL', KEYS[1])
  if #keep > 0 then
    chunks(keep, function(c) redis.call('RPUSH', KEYS[1], unpack(c)) end)
    redis.call('PEXPIRE', KEYS[1], last - now)
  end
end
if take then
  forget({ARGV[1]})
  local kind, added = string.match(ds[take], '^(%a):%d+:?%x*:?(%x*)$')
  return (kind or 'd') .. (added or '')
end
if edited then return 'E' end
local ttl, max = tonumber(ARGV[2]), tonumber(ARGV[3])
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  if ARGV[6] == '1' then return 'n' end
  local n = redis.call('ZCARD', KEYS[2])
  if n >= max then drop(redis.call('ZRANGE', KEYS[2], 0, n - max, 'WITHSCORES'), max) end
  -- ordered by when first listed, to the microsecond: across groups too
  redis.call('ZADD', KEYS[2], tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[1])
  redis.call('HSET', KEYS[6], ARGV[1], now)
end
redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
for i = 2, 7 do redis.call('PEXPIRE', KEYS[i], ttl) end
return 'p'
`)

// addScript adds a decision for any call (ARGV[2], 'a' or 'd') to KEYS[1],
// which lives TTL ms (ARGV[3]), unless ARGV[4] live ones wait already (it
// answers -1), and drops the oldest pending request of the tool and input
// ARGV[1] (the first half of its member).
var addScript = redis.NewScript(forgetExpired + pushDecision + `
if push(ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), '', '') < 0 then return -1 end
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(m, 1, 32) == ARGV[1] then
    forget({m})
    break
  end
end
return 1
`)

// pushDecision is the Lua that adds a decision (kind 'a' or 'd') to
// KEYS[1], which lives ttl ms, answered for the request req (the second
// half of its member; empty for any call), with added (hex; what a
// person added to an answer, for kinds 'e' and 'm'), unless max live ones
// wait already: push answers -1 then, 1 otherwise.
const pushDecision = `
local function push(kind, ttl, max, req, added)
if redis.call('LLEN', KEYS[1]) >= max then
  local keep, last = {}, now
  for _, d in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    local exp = tonumber(string.match(d, '^%a:(%d+)'))
    if exp and exp > now then
      keep[#keep + 1] = d
      if exp > last then last = exp end
    end
  end
  redis.call('DEL', KEYS[1])
  if #keep > 0 then
    chunks(keep, function(c) redis.call('RPUSH', KEYS[1], unpack(c)) end)
    redis.call('PEXPIRE', KEYS[1], last - now)
  end
  if #keep >= max then return -1 end
end
local d = kind .. ':' .. (now + ttl)
if req ~= '' then d = d .. ':' .. req end
if req ~= '' and added ~= '' then d = d .. ':' .. added end
redis.call('RPUSH', KEYS[1], d)
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
end
`

// revokeScript drops the decisions of KEYS[1] and answers how many were
// live.
var revokeScript = redis.NewScript(forgetExpired + `
local n = 0
for _, d in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local exp = string.match(d, '^%a:(%d+)')
  if exp and tonumber(exp) > now then n = n + 1 end
end
redis.call('DEL', KEYS[1])
return n
`)

// Decide uses up the oldest decision answered for call's own request (by
// any replica), else the oldest Grant or Deny of call.Tool with call.Input,
// or answers Pending and lists the call's request in Pending. It
// returns Pending and an error wrapping ErrUnavailable when Redis is
// unavailable: toolsafe's gate then pauses the call, failing closed. It
// returns Pending and the *middleware.ArgsError of canonical.CheckText for
// an input that is not UTF-8 text, which the pending list (JSON) could not
// hold as it is. An answer given with changes (Reply) is not used by
// Decide: it returns Pending and an error wrapping approval.ErrEdited, and
// keeps the answer for Verdict.
func (g *Grants) Decide(ctx context.Context, call approval.CallInfo) (approval.Decision, error) {
	v, err := g.verdict(ctx, call, false)
	return v.Decision, err
}

// Verdict is Decide with what the person added (see Reply): the changed
// input of an approval with changes, canonical JSON, and the message of a
// denial. A call uses an answer given with changes only through Verdict,
// which toolsafe's gate calls. Its errors are Decide's, ErrEdited aside.
func (g *Grants) Verdict(ctx context.Context, call approval.CallInfo) (approval.Verdict, error) {
	return g.verdict(ctx, call, true)
}

var _ approval.VerdictApprover = (*Grants)(nil)

func (g *Grants) verdict(ctx context.Context, call approval.CallInfo, edits bool) (approval.Verdict, error) {
	pending := approval.Verdict{Decision: approval.Pending}
	if g.s == nil {
		return pending, errNoStore
	}
	if err := canonical.CheckText(call.Input); err != nil {
		return pending, fmt.Errorf("redisstore: %w", err)
	}
	info, err := json.Marshal(storedCall{call, g.Quorum[call.Tool]})
	if err != nil {
		return pending, fmt.Errorf("redisstore: %w", err)
	}
	ti := toolInput(call.Tool, call.Input)
	kind := "n"
	if g.ReadOldKeys {
		if kind, err = g.decide(ctx, g.s.oldGrantGroup(), ti, call, info, true, edits); err != nil {
			return pending, err
		}
	}
	if kind == "n" {
		if kind, err = g.decide(ctx, g.groupOf(ti), ti, call, info, false, edits); err != nil {
			return pending, err
		}
	}
	if kind == "" {
		return pending, nil
	}
	added, err := hex.DecodeString(kind[1:])
	if err != nil {
		return pending, fmt.Errorf("redisstore: a decision in Redis is not valid: %w", err)
	}
	switch kind[0] {
	case 'a':
		return approval.Verdict{Decision: approval.Approved}, nil
	case 'e':
		return approval.Verdict{Decision: approval.Approved, Input: string(added)}, nil
	case 'd', 'm':
		return approval.Verdict{Decision: approval.Denied, Message: string(added)}, nil
	case 'E':
		return pending, fmt.Errorf("redisstore: %w", approval.ErrEdited)
	}
	return pending, nil
}

// decide runs decideScript in the group base: onlyUse uses a decision and
// keeps a request listed already, and answers "n" otherwise; edits lets
// it use an approval with changes.
func (g *Grants) decide(ctx context.Context, base, ti string, call approval.CallInfo, info []byte, onlyUse, edits bool) (string, error) {
	keys := grantKeys(base, ti)
	as := call.AnsweredAs()
	also := digest(as[len(as)-1])
	var kind string
	err := g.s.do(ctx, opDecide, keys[0], func(ctx context.Context) error {
		var err error
		kind, err = decideScript.Run(ctx, g.s.client, append(keys, overflowKey(base), droppedKey(base)), member(ti, call), g.ttl().Milliseconds(), g.maxPending(), info, also, flag(onlyUse), flag(edits),
			g.auditTTL().Milliseconds(), g.maxAudit(), approval.EventInputBytes).Text()
		return err
	})
	if err != nil {
		g.s.health.refused(stateGrants)
	}
	return kind, err
}

// Grant approves one call (one attempt, for a destructive tool) of tool
// with input, in whichever run, on whichever replica it runs. Granting
// twice approves two. It drops the oldest request listed for tool and
// input, which the grant may answer; to answer the very request a person
// was shown, use Answer. It returns an error wrapping ErrUnavailable when
// Redis is unavailable (nothing was granted), an error wrapping
// approval.ErrTooManyDecisions when DefaultMaxDecisions decisions wait for
// tool and input already, and the *middleware.ArgsError of
// canonical.CheckText for an input that is not UTF-8 text (no call with it
// is ever asked about).
func (g *Grants) Grant(ctx context.Context, tool, input string) error {
	return g.add(ctx, tool, input, "a")
}

// Deny refuses the next call of tool with input, in whichever run: it ends with
// approval-denied, and the model is told not to call it again. Its errors
// are Grant's.
func (g *Grants) Deny(ctx context.Context, tool, input string) error {
	return g.add(ctx, tool, input, "d")
}

func (g *Grants) add(ctx context.Context, tool, input, kind string) error {
	if g.s == nil {
		return errNoStore
	}
	if err := canonical.CheckText(input); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	keys, ti := g.keys(tool, input)
	var n int64
	err := g.s.do(ctx, opGrant, keys[0], func(ctx context.Context) error {
		var err error
		n, err = addScript.Run(ctx, g.s.client, keys, ti, kind, g.ttl().Milliseconds(), DefaultMaxDecisions).Int64()
		return err
	})
	if err != nil {
		g.s.health.refused(stateGrants)
		return err
	}
	if n < 0 {
		return tooMany(tool)
	}
	return nil
}

// Revoke takes back every grant and denial of tool with input not used
// yet, those of Answer included, and reports how many there were. It returns an error wrapping
// ErrUnavailable when Redis is unavailable (nothing was revoked).
func (g *Grants) Revoke(ctx context.Context, tool, input string) (int, error) {
	if g.s == nil {
		return 0, errNoStore
	}
	ti := toolInput(tool, input)
	bases := []string{g.groupOf(ti)}
	if g.ReadOldKeys {
		bases = append(bases, g.s.oldGrantGroup())
	}
	total := 0
	for _, base := range bases {
		keys := grantKeys(base, ti)
		var n int64
		err := g.s.do(ctx, opRevoke, keys[0], func(ctx context.Context) error {
			var err error
			n, err = revokeScript.Run(ctx, g.s.client, keys).Int64()
			return err
		})
		if err != nil {
			g.s.health.refused(stateGrants)
			return total, err
		}
		total += int(n)
	}
	return total, nil
}

// Pending returns the calls waiting for a decision on any replica, oldest
// first, one per request (tool, input and run, or outside a run call ID;
// the latest call of it): what a program shows the person who approves;
// the newest MaxPending of them. It reads each of the 16 groups the
// requests are kept in, one script each. It returns an error wrapping
// ErrUnavailable when Redis is unavailable.
func (g *Grants) Pending(ctx context.Context) ([]approval.CallInfo, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	ls, err := g.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]approval.CallInfo, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.call)
	}
	return out, nil
}

// tooMany is the error of a decision refused because DefaultMaxDecisions
// wait for tool and an input already.
func tooMany(tool string) error {
	return fmt.Errorf("redisstore: %d decisions for %s with this input wait to be used already: they are used as their calls run, or expire; revoke them to give another: %w",
		DefaultMaxDecisions, tool, approval.ErrTooManyDecisions)
}
