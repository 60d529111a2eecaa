package redisstore

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
)

// requestsScript answers, for each pending request oldest first, its
// member, number, info, since when (ms) and votes (JSON).
var requestsScript = redis.NewScript(forgetExpired + `
local out = {}
local ms = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #ms, 2 do
  local info = redis.call('HGET', KEYS[4], ms[i])
  if info then
    out[#out + 1] = ms[i]
    out[#out + 1] = ms[i + 1]
    out[#out + 1] = info
    out[#out + 1] = redis.call('HGET', KEYS[6], ms[i]) or '0'
    out[#out + 1] = redis.call('HGET', KEYS[7], ms[i]) or '[]'
  end
end
return out
`)

// answerScript answers the request ARGV[1] numbered ARGV[2] whose info has
// the SHA-1 ARGV[3]. ARGV[4..6] are the decision's kind ('a', 'd', 'e' for
// an approval with changes, 'm' a denial with a message), TTL ms and the
// most decisions; ARGV[7] the answer as JSON; ARGV[8] and ARGV[9] how long
// and how many records the audit trail KEYS[8] keeps; ARGV[10] the tool's
// quorum, ARGV[11] who answers, ARGV[12] the changed input approved ("" for
// the call as shown), ARGV[13] what the decision carries (hex) and
// ARGV[14] the voter's form of who answers (approval.Voter). An approval
// by someone whose voter form approved already answers {-2}. An approval that
// leaves fewer than the quorum of distinct people approving the same input
// is a vote: added to the request's votes in KEYS[7], it leaves the
// request waiting. Otherwise a decision for the request alone is added to
// KEYS[1] and the request forgotten. Either way the answer's record goes
// to the audit trail, and the script answers {1, record}; {0} when no such
// request waits, {-1} when too many decisions wait. All or nothing: a
// script is atomic.
var answerScript = redis.NewScript(forgetExpired + pushDecision + `
local seq = redis.call('ZSCORE', KEYS[2], ARGV[1])
local info = redis.call('HGET', KEYS[4], ARGV[1])
if not seq or not info or tonumber(seq) ~= tonumber(ARGV[2]) or redis.sha1hex(info) ~= ARGV[3] then
  return {0}
end
local since = redis.call('HGET', KEYS[6], ARGV[1]) or '0'
local quorum, approvals, vote = tonumber(ARGV[10]), 0, false
if ARGV[4] == 'a' or ARGV[4] == 'e' then
  local votes = {}
  local raw = redis.call('HGET', KEYS[7], ARGV[1])
  if raw then votes = cjson.decode(raw) end
  approvals = 1
  for _, v in ipairs(votes) do
    if (v.who or v.by) == ARGV[14] then return {-2} end
    if v.input == ARGV[12] then approvals = approvals + 1 end
  end
  if approvals < quorum then
    vote = true
    votes[#votes + 1] = {by = ARGV[11], who = ARGV[14], at_ms = now, input = ARGV[12]}
    redis.call('HSET', KEYS[7], ARGV[1], cjson.encode(votes))
    local ttl = redis.call('PTTL', KEYS[3])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[7], ttl) end
  end
end
if not vote then
  if push(ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), string.sub(ARGV[1], 33), ARGV[13]) < 0 then return {-1} end
  forget({ARGV[1]})
end
local rec = '{"at_ms":' .. now .. ',"since_ms":' .. since .. ',"approvals":' .. approvals .. ',"quorum":' .. quorum ..
  ',"answer":' .. ARGV[7] .. ',"call":' .. info .. '}'
local keep, max = tonumber(ARGV[8]), tonumber(ARGV[9])
redis.call('ZADD', KEYS[8], now, rec)
redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now - keep)
local n = redis.call('ZCARD', KEYS[8])
if n > max then redis.call('ZREMRANGEBYRANK', KEYS[8], 0, n - max - 1) end
redis.call('PEXPIRE', KEYS[8], keep)
return {1, rec}
`)

// infoScript answers the info of the pending request ARGV[1], or nil.
var infoScript = redis.NewScript(`return redis.call('HGET', KEYS[4], ARGV[1])`)

// auditScript drops the records of KEYS[1] older than ARGV[1] ms and
// answers at most ARGV[2] of the others (0: all), newest first.
var auditScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
`)

func (g *Grants) auditTTL() time.Duration {
	if g.AuditTTL > 0 {
		return g.AuditTTL
	}
	return approval.DefaultAuditTTL
}

func (g *Grants) maxAudit() int {
	if g.MaxAudit > 0 {
		return g.MaxAudit
	}
	return approval.DefaultMaxAudit
}

// Requests returns the calls waiting for a decision on any replica, oldest
// first, as Pending does (one script for each of the 16 groups the
// requests are kept in), with their IDs and since when they wait: what an
// approvals inbox lists (package inbox). It returns an error wrapping
// ErrUnavailable when Redis is unavailable.
func (g *Grants) Requests(ctx context.Context) ([]approval.Request, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	ls, err := g.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]approval.Request, 0, len(ls))
	for _, l := range ls {
		sum := sha1.Sum([]byte(l.info)) // Redis's redis.sha1hex, which the answer checks
		id := l.seq + "." + l.member + "." + hex.EncodeToString(sum[:])
		if l.old {
			id = oldID + id
		}
		out = append(out, approval.Request{ID: id, Since: fromMillis(l.since), Call: withCanonical(l.call), Quorum: max(g.quorum(l.call.Tool), l.quorum), Votes: l.votes})
	}
	return out, nil
}

// oldID begins the ID of a request kept in the old keys (ReadOldKeys).
const oldID = "old-"

// listed is a pending request as requestsScript answers it.
type listed struct {
	group             int // its group's place in Grants.groups
	member, seq, info string
	since             string
	old               bool // in the old keys
	call              approval.CallInfo
	quorum            int // what the replica that listed it asked for (storedCall)
	votes             []approval.Vote
}

// list returns the pending requests of every group, oldest first (by
// since when they wait, then by group and number), the newest MaxPending
// of them.
func (g *Grants) list(ctx context.Context) ([]listed, error) {
	out, err := g.listAll(ctx)
	if max := g.maxPending(); len(out) > max {
		out = out[len(out)-max:]
	}
	return out, err
}

// listAll returns every pending request Redis keeps (up to MaxPending in
// each group), oldest first, as list orders them.
func (g *Grants) listAll(ctx context.Context) ([]listed, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	var out []listed
	for i, base := range g.groups() {
		keys := grantKeys(base, "")
		var raw []string
		err := g.s.do(ctx, opPending, keys[1], func(ctx context.Context) error {
			var err error
			raw, err = requestsScript.Run(ctx, g.s.client, keys).StringSlice()
			return err
		})
		if err != nil {
			g.s.health.refused(stateGrants)
			return nil, err
		}
		for j := 0; j+4 < len(raw); j += 5 {
			l := listed{group: i, member: raw[j], seq: raw[j+1], info: raw[j+2], since: raw[j+3], old: base == g.s.oldGrantGroup() && !g.old}
			var sc storedCall
			if err := json.Unmarshal([]byte(l.info), &sc); err != nil {
				return nil, fmt.Errorf("redisstore: a pending request in Redis is not valid: %w", err)
			}
			l.call, l.quorum = sc.CallInfo, sc.Quorum
			if l.votes, err = decodeVotes(raw[j+4]); err != nil {
				return nil, err
			}
			out = append(out, l)
		}
	}
	// A request's number is when it was first listed, in µs of its node's
	// clock (in the old keys, a count: their since when, in ms, orders them).
	order := func(l listed) int64 {
		n, _ := strconv.ParseInt(l.seq, 10, 64)
		if l.old || g.old {
			ms, _ := strconv.ParseInt(l.since, 10, 64)
			return ms * 1000
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b listed) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.group, b.group), cmp.Compare(a.seq, b.seq))
	})
	return out, nil
}

// Answer decides the request named id (from Requests), and adds who
// answered to the audit trail in Redis, in one atomic script: two answers
// to one request, from any replicas, record one, and the other gets an
// error wrapping approval.ErrNotPending. The decision is used by the next
// call of that request only (its tool and input in its run, or outside a
// run its call), never by another run's identical call. It returns an
// error wrapping ErrUnavailable when Redis is unavailable: the answer was
// then recorded whole, or not at all (Requests tells which); and one
// wrapping approval.ErrTooManyDecisions when DefaultMaxDecisions decisions
// wait for the request's tool and input already (nothing was recorded).
// For a tool with a Quorum, an approval is one vote: see Reply, which
// Answer calls.
func (g *Grants) Answer(ctx context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	return g.Reply(ctx, id, approval.Reply{Decision: d, By: by, Comment: comment})
}

var _ interface {
	Reply(context.Context, string, approval.Reply) (approval.Record, error)
} = (*Grants)(nil) // package inbox's Replier

// Reply answers the request named id as Answer does, with what a reply
// may add, as approval.Grants.Reply does: a changed input with an approval
// (the grant covers it, not the call's own input, and only Verdict uses
// it), a message for the model with a denial, and the tool's Quorum: an
// approval of a tool that needs more than one is a vote, recorded in the
// audit trail (Record.Approvals of Record.Quorum), and the request goes on
// waiting, listed with its votes, until that many distinct people approved
// the same input; a denial ends it at once. Each is one atomic script, so
// votes given through any replicas at once are counted once each. It
// returns the record; an error wrapping approval.ErrNotPending when no
// request with id waits as shown, approval.ErrAlreadyVoted when r.By
// approved it already, approval.CheckReply's error, or Answer's errors.
// Nothing was recorded on an error (on ErrUnavailable: whole or not at
// all).
func (g *Grants) Reply(ctx context.Context, id string, r approval.Reply) (approval.Record, error) {
	if g.s == nil {
		return approval.Record{}, errNoStore
	}
	r, err := approval.CheckReply(r)
	if err != nil {
		return approval.Record{}, err
	}
	bare, old := strings.CutPrefix(id, oldID)
	seq, member, sum, ok := parseRequestID(bare)
	if !ok || old && !g.ReadOldKeys {
		return approval.Record{}, fmt.Errorf("redisstore: %w", approval.ErrNotPending)
	}
	base := g.groupOf(member[:32])
	if old {
		base = g.s.oldGrantGroup()
	}
	keys := append(grantKeys(base, member[:32]), auditKey(base))
	// The request's tool (its quorum) and input (is the change one?), read
	// from the info the ID names: the script checks it is still the same.
	var info string
	err = g.s.do(ctx, opAnswer, keys[0], func(ctx context.Context) error {
		var err error
		info, err = infoScript.Run(ctx, g.s.client, keys, member).Text()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return approval.Record{}, fmt.Errorf("redisstore: %w", approval.ErrNotPending)
	}
	if err != nil {
		g.s.health.refused(stateGrants)
		return approval.Record{}, err
	}
	if s := sha1.Sum([]byte(info)); hex.EncodeToString(s[:]) != sum {
		return approval.Record{}, fmt.Errorf("redisstore: %w", approval.ErrNotPending)
	}
	var sc storedCall
	if err := json.Unmarshal([]byte(info), &sc); err != nil {
		return approval.Record{}, fmt.Errorf("redisstore: a pending request in Redis is not valid: %w", err)
	}
	c, quorum := sc.CallInfo, max(g.quorum(sc.Tool), sc.Quorum)
	if r.Input == withCanonical(c).CanonicalInput {
		r.Input = "" // the call as shown
	}
	kind, added := "a", ""
	switch {
	case r.Decision == approval.Approved && r.Input != "":
		kind, added = "e", hex.EncodeToString([]byte(r.Input))
	case r.Decision == approval.Denied && r.Message != "":
		kind, added = "m", hex.EncodeToString([]byte(r.Message))
	case r.Decision == approval.Denied:
		kind = "d"
	}
	answer, _ := json.Marshal(storedAnswer{RequestID: id, Decision: r.Decision.String(), By: r.By, Comment: r.Comment, Input: r.Input, Message: r.Message})
	var res []any
	err = g.s.do(ctx, opAnswer, keys[0], func(ctx context.Context) error {
		var err error
		res, err = answerScript.Run(ctx, g.s.client, keys, member, seq, sum, kind, g.ttl().Milliseconds(), DefaultMaxDecisions,
			answer, g.auditTTL().Milliseconds(), g.maxAudit(), quorum, r.By, r.Input, added, approval.Voter(r.By)).Slice()
		return err
	})
	if err != nil {
		g.s.health.refused(stateGrants)
		return approval.Record{}, err
	}
	switch n, _ := res[0].(int64); n {
	case 0:
		return approval.Record{}, fmt.Errorf("redisstore: %w", approval.ErrNotPending)
	case -1:
		return approval.Record{}, tooMany("this request's tool")
	case -2:
		return approval.Record{}, fmt.Errorf("redisstore: %w", approval.ErrAlreadyVoted)
	}
	rec, _ := res[1].(string)
	return decodeRecord(rec)
}

// quorum is how many distinct people must approve a request of tool.
func (g *Grants) quorum(tool string) int { return max(g.Quorum[tool], 1) }

// storedCall is a pending request's call as Redis keeps it, with the
// quorum the replica that listed it asked for: a replica, or the
// toolsafe-approvals command, that answers with no Quorum of its own (or a
// smaller one) still needs that many people, so where a vote is cast
// cannot lower what the agent's program required.
type storedCall struct {
	approval.CallInfo
	Quorum int `json:"toolsafe_quorum,omitempty"`
}

// storedVote is a vote as answerScript keeps it.
type storedVote struct {
	By    string `json:"by"`
	AtMS  int64  `json:"at_ms"`
	Input string `json:"input"`
}

func decodeVotes(s string) ([]approval.Vote, error) {
	if s == "" || s == "[]" || s == "{}" { // cjson writes an empty table as {}
		return nil, nil
	}
	var vs []storedVote
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		return nil, fmt.Errorf("redisstore: the votes of a pending request in Redis are not valid: %w", err)
	}
	out := make([]approval.Vote, 0, len(vs))
	for _, v := range vs {
		out = append(out, approval.Vote{By: v.By, At: time.UnixMilli(v.AtMS), Input: v.Input})
	}
	return out, nil
}

// Audit returns the records of answers kept in Redis (see AuditTTL and
// MaxAudit), newest first, at most limit of them; limit ≤ 0 means all (at
// most MaxAudit). It reads each of the 16 groups, one script each. It
// returns an error wrapping ErrUnavailable when Redis is unavailable.
func (g *Grants) Audit(ctx context.Context, limit int) ([]approval.Record, error) {
	if g.s == nil {
		return nil, errNoStore
	}
	var out []approval.Record
	for _, base := range g.groups() {
		var raw []string
		err := g.s.do(ctx, opAudit, auditKey(base), func(ctx context.Context) error {
			var err error
			raw, err = auditScript.Run(ctx, g.s.client, []string{auditKey(base)}, g.auditTTL().Milliseconds(), max(limit, 0)).StringSlice()
			return err
		})
		if err != nil {
			g.s.health.refused(stateGrants)
			return nil, err
		}
		for _, s := range raw {
			r, err := decodeRecord(s)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b approval.Record) int { return b.At.Compare(a.At) })
	n := g.maxAudit()
	if limit > 0 {
		n = min(n, limit)
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// storedAnswer is the answer part of an audit record in Redis.
type storedAnswer struct {
	RequestID string `json:"request_id"`
	Decision  string `json:"decision"`
	By        string `json:"by"`
	Comment   string `json:"comment"`
	Input     string `json:"input,omitempty"`
	Message   string `json:"message,omitempty"`
}

// storedRecord is an audit record as answerScript writes it.
type storedRecord struct {
	AtMS      int64             `json:"at_ms"`
	SinceMS   int64             `json:"since_ms"`
	Approvals int               `json:"approvals"`
	Quorum    int               `json:"quorum"`
	Answer    storedAnswer      `json:"answer"`
	Call      approval.CallInfo `json:"call"`
}

func decodeRecord(s string) (approval.Record, error) {
	var r storedRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return approval.Record{}, fmt.Errorf("redisstore: an audit record in Redis is not valid: %w", err)
	}
	d := approval.Denied
	if r.Answer.Decision == approval.Approved.String() {
		d = approval.Approved
	}
	return approval.Record{
		RequestID: r.Answer.RequestID, Decision: d, By: r.Answer.By, Comment: r.Answer.Comment,
		At: time.UnixMilli(r.AtMS), Since: time.UnixMilli(r.SinceMS), Call: withCanonical(r.Call),
		Input: r.Answer.Input, Message: r.Answer.Message, Approvals: r.Approvals, Quorum: r.Quorum,
	}, nil
}

// parseRequestID splits an ID of Requests: number, member, SHA-1 of info.
func parseRequestID(id string) (seq, member, sum string, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 || !isHex(parts[1], 64) || !isHex(parts[2], 40) {
		return "", "", "", false
	}
	if _, err := strconv.ParseUint(parts[0], 10, 64); err != nil {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func fromMillis(s string) time.Time {
	ms, _ := strconv.ParseInt(s, 10, 64)
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// withCanonical sets c.CanonicalInput when the gate did not.
func withCanonical(c approval.CallInfo) approval.CallInfo {
	if c.CanonicalInput == "" {
		if canon, err := canonical.JSON(c.Input); err == nil {
			c.CanonicalInput = canon
		} else {
			c.CanonicalInput = c.Input
		}
	}
	return c
}
