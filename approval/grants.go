package approval

import (
	"context"
	"slices"
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
// A call with no decision waiting is Pending and is listed (Pending,
// Requests) until a decision for it arrives. A request is one tool, one
// canonical input and one run (CallInfo.RunID); outside a run, one call ID
// when the call's is known (see CallInfo.RequestKey): two runs waiting on
// the same tool and input are two requests, listed apart. An Answer
// decides the request it names and no other: its decision is used only by
// a call of that run (outside a run, by the call with that ID), never by
// another run's identical call. A run's call resumed after
// the answer may carry a new call ID (the model's); the run names it. A
// Grant or Deny, given by the program rather than for a request shown, is
// bound to the tool and input only: it is used by the next such call,
// whatever its run. A call uses an answer given for its own request before
// a Grant, and decisions of one kind are used in the order they were given.
//
// Grants are bounded: a grant or denial not used within TTL expires, and
// so does a pending request; Revoke takes a grant back; at most MaxPending
// requests are listed, the oldest dropped first (Overflow counts them,
// Events names them).
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
	// AuditTTL is how long the record of an Answer, and an Event, is kept;
	// zero means DefaultAuditTTL (30 days).
	AuditTTL time.Duration
	// MaxAudit caps the records of Answer kept, the oldest dropped first,
	// and apart from them the events of each kind (Events); zero means
	// DefaultMaxAudit (10,000).
	MaxAudit int
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
	// Quorum is, per tool name, how many distinct people must approve a
	// request of that tool (Reply, Answer) before its call may run: 2 means
	// two people. A tool not in it, or with a value below 2, needs one.
	// Grant and Deny, given by the program, are not votes.
	Quorum map[string]int

	mu        sync.Mutex
	decisions map[grantKey][]decided
	pending   []pendingCall
	seq       uint64   // the last pending request's number
	audit     []Record // oldest first
	refusals  []Event  // oldest first; the newest MaxAudit count (appendBounded)
	drops     []Event  // the same
	overflow  Overflow
}

// Overflow is what a full list of pending requests dropped: a request
// listed while MaxPending wait pushes the oldest out, so an agent that
// floods requests could hide a real one. The approvals inbox shows it.
type Overflow struct {
	// Dropped is how many pending requests were dropped, in all; 0 when
	// none ever was.
	Dropped int
	// Since and Last are when the first and the latest were dropped; zero
	// when none was.
	Since, Last time.Time
	// Max is the cap that was reached (MaxPending, or DefaultMaxPending);
	// with nothing dropped, the cap now.
	Max int
	// Unlisted is how many requests wait now without being listed, for a
	// store that keeps more than it lists (redisstore's keeps up to Max in
	// each of the groups it spreads them over, and lists the newest Max of
	// all); always 0 for Grants, which keeps no more than it lists.
	Unlisted int
}

// Overflow returns what the full list dropped since g was made. It never
// returns an error; ctx is ignored. A dropped request's call asks again
// when its run resumes, and is listed anew. Each dropped request is also
// in Events (EventDropped): which tool, run and call it was.
func (g *Grants) Overflow(context.Context) (Overflow, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.overflow
	o.Max = g.MaxPending
	if o.Max <= 0 {
		o.Max = DefaultMaxPending
	}
	return o, nil
}

type grantKey struct{ tool, input string }

type decided struct {
	d       Decision
	expires time.Time
	request string // the request it was answered for (see RequestKey); "" for Grant and Deny
	input   string // the changed input approved, canonical; "" for the call as asked
	message string // a denial's message for the model
}

type pendingCall struct {
	key     grantKey
	request string // whose request it is: its run, or outside a run its call (see RequestKey)
	info    CallInfo
	expires time.Time
	seq     uint64    // its number, from when it was first listed
	since   time.Time // when it was first listed
	votes   []Vote    // the approvals given while it waits for a quorum
}

var _ Approver = (*Grants)(nil)

// NewGrants returns an empty Grants: every call is Pending until granted.
func NewGrants() *Grants { return &Grants{} }

// Grant approves one call (one attempt, for a destructive tool) of tool with
// input, in whichever run. Granting twice approves two. It drops the oldest
// request listed for tool and input, which the grant may answer: to answer
// the very request a person was shown, use Answer.
func (g *Grants) Grant(tool, input string) { g.add(tool, input, Approved) }

// Deny refuses the next call of tool with input, in whichever run: it ends
// with approval-denied, and the model is told not to call it again. It
// drops the oldest request listed for tool and input, as Grant does.
func (g *Grants) Deny(tool, input string) { g.add(tool, input, Denied) }

// Revoke takes back every grant and denial of tool with input not used
// yet, those of Answer included, and reports how many there were.
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
	g.addLocked(k, "", d, now)
	for i, p := range g.pending {
		if p.key == k { // the oldest: the grant may answer it
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			break
		}
	}
}

// addLocked adds a decision for k, answered for request (see
// CallInfo.RequestKey), or for any call of k when request is "".
func (g *Grants) addLocked(k grantKey, request string, d Decision, now time.Time) {
	g.addDecisionLocked(k, request, decided{d: d}, now)
}

func (g *Grants) addDecisionLocked(k grantKey, request string, d decided, now time.Time) {
	if g.decisions == nil {
		g.decisions = make(map[grantKey][]decided)
	}
	d.expires, d.request = now.Add(g.ttl()), request
	g.decisions[k] = append(g.decisions[k], d)
}

// Decide uses up the oldest decision answered for call's own request (see
// RequestKey), else the oldest Grant or Deny of call.Tool with call.Input; or
// answers Pending and lists the call's request in Pending. An answer given
// with changes (Reply) is not used by Decide: it answers Pending with
// ErrEdited and keeps it for Verdict. It returns no other error.
func (g *Grants) Decide(_ context.Context, call CallInfo) (Decision, error) {
	v, edited := g.verdict(call, false)
	if edited {
		return Pending, ErrEdited
	}
	return v.Decision, nil
}

// verdict is Decide and Verdict: edits says whether an answer with changes
// may be used; edited reports that one waits which could not be.
func (g *Grants) verdict(call CallInfo, edits bool) (v Verdict, edited bool) {
	k := grantKey{call.Tool, call.CanonicalInput}
	if k.input == "" {
		k = keyOf(call.Tool, call.Input)
	}
	request := call.RequestKey()
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	if d, ok := g.useLocked(k, call.AnsweredAs(), edits); ok {
		g.dropPendingLocked(k, request)
		return Verdict{Decision: d.d, Input: d.input, Message: d.message}, false
	}
	if !edits && slices.ContainsFunc(g.decisions[k], func(d decided) bool {
		return d.input != "" && slices.Contains(call.AnsweredAs(), d.request)
	}) {
		return Verdict{}, true
	}
	for i, p := range g.pending {
		if p.key == k && p.request == request {
			// The latest call of the request; its number, age and votes stay.
			g.pending[i] = pendingCall{k, request, call, now.Add(g.ttl()), p.seq, p.since, p.votes}
			return Verdict{}, false
		}
	}
	max := g.MaxPending
	if max <= 0 {
		max = DefaultMaxPending
	}
	if len(g.pending) >= max {
		n := len(g.pending) - max + 1
		g.recordDropsLocked(g.pending[:n], max, now)
		g.pending = append(g.pending[:0], g.pending[n:]...)
		if g.overflow.Dropped == 0 {
			g.overflow.Since = now
		}
		g.overflow.Dropped += n
		g.overflow.Last = now
	}
	g.seq++
	g.pending = append(g.pending, pendingCall{key: k, request: request, info: call, expires: now.Add(g.ttl()), seq: g.seq, since: now})
	return Verdict{}, false
}

// useLocked removes and returns the decision a call of k uses: the oldest
// answered for one of its requests (see CallInfo.AnsweredAs), else the
// oldest given for any call; one with changes only when edits is true.
func (g *Grants) useLocked(k grantKey, requests []string, edits bool) (decided, bool) {
	ds := g.decisions[k]
	i := slices.IndexFunc(ds, func(d decided) bool {
		return d.request != "" && slices.Contains(requests, d.request) && (edits || d.input == "")
	})
	if i < 0 {
		i = slices.IndexFunc(ds, func(d decided) bool { return d.request == "" })
	}
	if i < 0 {
		return decided{}, false
	}
	d := ds[i]
	if len(ds) == 1 {
		delete(g.decisions, k)
	} else {
		g.decisions[k] = slices.Delete(ds, i, i+1)
	}
	return d, true
}

// Pending returns the calls waiting for a decision, oldest first, one per
// request (tool, input and run, or outside a run call ID; the latest call
// of it): what a program shows the person who approves. The slice is a
// copy.
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

func (g *Grants) dropPendingLocked(k grantKey, request string) {
	for i, p := range g.pending {
		if p.key == k && p.request == request {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return
		}
	}
}
