package approval

import (
	"context"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/canonical"
)

// DefaultGrantTTL is how long a grant, a denial or a pending request lives
// in Grants when Grants.TTL is zero.
const DefaultGrantTTL = time.Hour

// DefaultMaxPending is how many pending requests Grants lists at most when
// Grants.MaxPending is zero; the oldest is dropped first.
const DefaultMaxPending = 1000

// Grants is an in-memory Approver for a program that asks a person: each
// Grant or Deny is bound to one tool and its input, and is used up by one
// decision. A grant therefore never covers another input, another tool, or
// a second call; for a destructive tool (ApproveEachAttempt) it covers one
// attempt, so two attempts need two grants. Inputs are compared as
// canonical JSON (see canonical.JSON): a call re-planned with the same
// arguments in another key order or spacing matches its grant.
//
// Decisions for the same tool and input are used in the order they were
// given. A call with no decision waiting is Pending and is listed by Pending
// until a Grant or Deny for it arrives.
//
// Grants are bounded: a grant or denial not used within TTL expires, and
// so does a pending request; Revoke takes a grant back; at most MaxPending
// requests are listed, the oldest dropped first.
//
// The zero Grants is ready to use; NewGrants returns one. Set TTL and
// MaxPending before the first use. A Grants is safe for concurrent use.
type Grants struct {
	// TTL is how long a decision waits to be used, and a pending request to
	// be decided; zero means DefaultGrantTTL (1 hour).
	TTL time.Duration
	// MaxPending caps the pending requests listed; zero means
	// DefaultMaxPending (1,000).
	MaxPending int
	// AuditTTL is how long the record of an Answer is kept; zero means
	// DefaultAuditTTL (30 days).
	AuditTTL time.Duration
	// MaxAudit caps the records of Answer kept, the oldest dropped first;
	// zero means DefaultMaxAudit (10,000).
	MaxAudit int
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time

	mu        sync.Mutex
	decisions map[grantKey][]decided
	pending   []pendingCall
	seq       uint64   // the last pending request's number
	audit     []Record // oldest first
}

type grantKey struct{ tool, input string }

type decided struct {
	d       Decision
	expires time.Time
}

type pendingCall struct {
	key     grantKey
	info    CallInfo
	expires time.Time
	seq     uint64    // its number, from when it was first listed
	since   time.Time // when it was first listed
}

var _ Approver = (*Grants)(nil)

// NewGrants returns an empty Grants: every call is Pending until granted.
func NewGrants() *Grants { return &Grants{} }

// Grant approves one call (one attempt, for a destructive tool) of tool with
// input. Granting twice approves two.
func (g *Grants) Grant(tool, input string) { g.add(tool, input, Approved) }

// Deny refuses the next call of tool with input: it ends with
// approval-denied, and the model is told not to call it again.
func (g *Grants) Deny(tool, input string) { g.add(tool, input, Denied) }

// Revoke takes back every grant and denial of tool with input not used
// yet, and reports how many there were.
func (g *Grants) Revoke(tool, input string) int {
	k := keyOf(tool, input)
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.decisions[k])
	delete(g.decisions, k)
	return n
}

func keyOf(tool, input string) grantKey {
	canon, err := canonical.JSON(input)
	if err != nil {
		canon = input
	}
	return grantKey{tool, canon}
}

func (g *Grants) ttl() time.Duration {
	if g.TTL > 0 {
		return g.TTL
	}
	return DefaultGrantTTL
}

func (g *Grants) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Grants) add(tool, input string, d Decision) {
	k := keyOf(tool, input)
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	g.addLocked(k, d, now)
}

func (g *Grants) addLocked(k grantKey, d Decision, now time.Time) {
	if g.decisions == nil {
		g.decisions = make(map[grantKey][]decided)
	}
	g.decisions[k] = append(g.decisions[k], decided{d, now.Add(g.ttl())})
	g.dropPendingLocked(k)
}

// Decide uses up the oldest decision given for call.Tool and call.Input, or
// answers Pending and lists the call in Pending. It never returns an error.
func (g *Grants) Decide(_ context.Context, call CallInfo) (Decision, error) {
	k := grantKey{call.Tool, call.CanonicalInput}
	if k.input == "" {
		k = keyOf(call.Tool, call.Input)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	if ds := g.decisions[k]; len(ds) > 0 {
		if len(ds) == 1 {
			delete(g.decisions, k)
		} else {
			g.decisions[k] = ds[1:]
		}
		g.dropPendingLocked(k)
		return ds[0].d, nil
	}
	for i, p := range g.pending {
		if p.key == k {
			// The latest request for it; its number and age stay.
			g.pending[i] = pendingCall{k, call, now.Add(g.ttl()), p.seq, p.since}
			return Pending, nil
		}
	}
	max := g.MaxPending
	if max <= 0 {
		max = DefaultMaxPending
	}
	if len(g.pending) >= max {
		g.pending = append(g.pending[:0], g.pending[len(g.pending)-max+1:]...)
	}
	g.seq++
	g.pending = append(g.pending, pendingCall{k, call, now.Add(g.ttl()), g.seq, now})
	return Pending, nil
}

// Pending returns the calls waiting for a decision, oldest first, one per
// tool and input (the latest request for it): what a program shows the
// person who approves. The slice is a copy.
func (g *Grants) Pending() []CallInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked(g.now())
	if len(g.pending) == 0 {
		return nil
	}
	out := make([]CallInfo, len(g.pending))
	for i, p := range g.pending {
		out[i] = p.info
	}
	return out
}

// expireLocked drops the decisions and pending requests whose time is up.
func (g *Grants) expireLocked(now time.Time) {
	for k, ds := range g.decisions {
		keep := ds[:0]
		for _, d := range ds {
			if now.Before(d.expires) {
				keep = append(keep, d)
			}
		}
		if len(keep) == 0 {
			delete(g.decisions, k)
		} else {
			g.decisions[k] = keep
		}
	}
	keep := g.pending[:0]
	for _, p := range g.pending {
		if now.Before(p.expires) {
			keep = append(keep, p)
		}
	}
	g.pending = keep
	g.expireAuditLocked(now)
}

func (g *Grants) dropPendingLocked(k grantKey) {
	for i, p := range g.pending {
		if p.key == k {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}
