package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultAuditTTL is how long the record of a person's answer is kept when
// Grants.AuditTTL is zero: 30 days.
const DefaultAuditTTL = 30 * 24 * time.Hour

// DefaultMaxAudit is how many records of answers are kept at most when
// Grants.MaxAudit is zero: 10,000, the oldest dropped first.
const DefaultMaxAudit = 10000

// ErrNotPending is the error of an answer to a request that no longer
// waits as it was shown: it was answered already (a second click, another
// approver), it expired, or the call asked again with other details (the
// next attempt). Nothing was recorded. errors.Is tells it.
var ErrNotPending = errors.New("approval: the request is no longer pending as shown")

// ErrTooManyDecisions is the error of a store that refuses one more
// decision because too many already wait to be used for the same tool and
// input (redisstore keeps at most 100): nothing was recorded. They are used
// as the calls they decide run, and expire; a program can revoke them.
// errors.Is tells it.
var ErrTooManyDecisions = errors.New("approval: too many decisions wait to be used for this tool and input already")

// Request is one pending call as a person is shown it: one tool, one
// canonical input and one run (outside a run, one call; see
// CallInfo.RequestKey), so two runs waiting on the same tool and input are two
// requests. Its ID names this request with these details: it changes when
// the call asks again with other details, so an answer given for what was
// shown never covers anything else.
type Request struct {
	// ID is opaque; pass it to Answer. It holds no secret.
	ID string
	// Since is when the request was first listed.
	Since time.Time
	// Call is the call that waits, CanonicalInput set.
	Call CallInfo
	// Quorum is how many distinct people must approve it (Grants.Quorum):
	// at least 1. Votes are the approvals it has had so far, oldest first:
	// fewer than Quorum for any one input, or it would no longer wait.
	Quorum int
	Votes  []Vote
}

// Record is the audit trail's entry for one answer: who decided what,
// when, with what comment, about which request.
type Record struct {
	// RequestID is the Request.ID answered.
	RequestID string
	// Decision is Approved or Denied.
	Decision Decision
	// By is who answered, as the program identified them; Comment is
	// theirs, possibly empty.
	By, Comment string
	// At is when the answer was recorded; Since when the request was
	// first listed.
	At, Since time.Time
	// Call is the call answered, CanonicalInput set.
	Call CallInfo
	// Input is the changed input an approval with changes approved
	// (canonical JSON), or "" for the call as shown; Message a denial's
	// message for the model, or "".
	Input, Message string
	// Approvals is, for an approval, how many distinct people had approved
	// the request (this input) with this record, this one included; Quorum
	// how many it needed. An approval with Approvals below Quorum is a
	// vote: the request still waits. Both are 0 in records of stores
	// that do not count votes.
	Approvals, Quorum int
}

// requestID returns the ID of the request numbered seq with info: seq, a
// dot, and a digest of every field of info.
func requestID(seq uint64, info CallInfo) string {
	b, _ := json.Marshal(info) // a struct of strings, ints and bools
	sum := sha256.Sum256(b)
	return strconv.FormatUint(seq, 10) + "." + hex.EncodeToString(sum[:16])
}

// CheckAnswer returns the error of an answer that cannot be recorded: a
// decision other than Approved or Denied, or an empty by. Stores call it
// before they record anything.
func CheckAnswer(d Decision, by string) error {
	if d != Approved && d != Denied {
		return fmt.Errorf("approval: an answer is approved or denied, not %v", d)
	}
	if strings.TrimSpace(by) == "" {
		return errors.New("approval: an answer needs the name of who gives it")
	}
	return nil
}

// Requests returns the calls waiting for a decision, oldest first, as
// Pending does, with their IDs and ages: what an inbox lists.
func (g *Grants) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked(g.now())
	out := make([]Request, 0, len(g.pending))
	for _, p := range g.pending {
		out = append(out, Request{ID: p.id(), Since: p.since, Call: p.call(), Quorum: g.quorum(p.key.tool), Votes: slices.Clone(p.votes)})
	}
	return out
}

// Answer decides the request named id, and records who answered in the
// audit trail, in one step: two answers to one request record one, and the
// other gets ErrNotPending. The decision is used by the next call of that
// request only (its tool and input in its run, or outside a run its call;
// see CallInfo.RequestKey), never by another run's identical call. It
// returns the record, or ErrNotPending when no request with id waits, or
// CheckAnswer's error; either way nothing was recorded. For a tool with a
// Quorum, an approval is one vote: see Reply, which Answer calls.
func (g *Grants) Answer(id string, d Decision, by, comment string) (Record, error) {
	return g.Reply(id, Reply{Decision: d, By: by, Comment: comment})
}

// Audit returns the records of answers kept (see AuditTTL and MaxAudit),
// newest first, at most limit of them; limit ≤ 0 means all. The slice is
// a copy. The trail lives in memory: it ends with the process.
func (g *Grants) Audit(limit int) []Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked(g.now())
	n := len(g.audit)
	if limit > 0 && limit < n {
		n = limit
	}
	out := make([]Record, n)
	for i := range out {
		out[i] = g.audit[len(g.audit)-1-i]
	}
	return out
}

func (g *Grants) auditTTL() time.Duration {
	if g.AuditTTL > 0 {
		return g.AuditTTL
	}
	return DefaultAuditTTL
}

func (g *Grants) maxAudit() int {
	if g.MaxAudit > 0 {
		return g.MaxAudit
	}
	return DefaultMaxAudit
}

// expireAuditLocked drops the records older than the audit TTL.
func (g *Grants) expireAuditLocked(now time.Time) {
	i := 0
	for i < len(g.audit) && !now.Before(g.audit[i].At.Add(g.auditTTL())) {
		i++
	}
	if i > 0 {
		g.audit = append(g.audit[:0], g.audit[i:]...)
	}
	g.expireEventsLocked(now)
}

func (p pendingCall) call() CallInfo {
	c := p.info
	c.CanonicalInput = p.key.input
	return c
}

func (p pendingCall) id() string { return requestID(p.seq, p.call()) }
