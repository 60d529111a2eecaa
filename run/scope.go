package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/toolsafe/toolsafe/internal/call"
)

// ErrNotHeld is the error (wrapped) with which every call of a run resumed
// with Resume ends when the run's ledger does not hold the paused run: it
// is another ledger than the one that recorded it (Resume on a context not
// scoped on that ledger falls back to the default one), or the run
// expired. No tool is called; it is returned as an error, for the program.
var ErrNotHeld = errors.New("toolsafe: the run ledger does not hold the run being resumed")

// state is one scope of an agent run: the positions its calls have taken
// among the run's calls of each tool with each input. A new scope (With,
// or Resume) starts at the first of each, so its calls continue the run's
// entries in order.
type state struct {
	id     string
	ledger Ledger

	resumed bool        // made by Resume: the ledger must hold the run
	held    atomic.Bool // the ledger was found to hold it
	heldMu  sync.Mutex

	mu      sync.Mutex
	cursors map[groupKey]*cursor

	// flights are the run's calls in flight, shared by the scopes that
	// Resume makes of the run on a context already scoped to it.
	flights *call.Flights

	// unreadable counts the calls this scope did not make because their
	// entry could not be read (ErrCorrupt): failed for good, as the loop
	// guard counts them.
	unreadable struct {
		sync.Mutex
		total   int
		perTool map[string]int
		groups  map[groupKey]int
		said    map[groupKey]bool // logged already
	}
}

// groupKey names the calls of one tool with one input.
type groupKey struct{ tool, input string }

// cursor is where a scope stands among the run's calls of one tool with
// one input: the next position, and earlier ones its calls gave back
// (paused), which the next call takes first.
type cursor struct {
	mu   sync.Mutex // held across the ledger's Begin, so identical calls take one position each
	next int
	free []int
	// unsure is the Claim of a Begin that got no answer: it may have
	// recorded its intent, a call that was never made. The next identical
	// call begins with it, so the ledger gives that intent back as its own.
	unsure string
}

// scope is what a context tells every call made on it: the run it is part
// of, and the paused calls it resumes. It is the call record's Scope (see
// package internal/call), found under its key; toolsafe's run layers use
// its methods.
type scope struct {
	run         *state
	resumptions []*resumption
}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(call.ScopeKey{}).(*scope)
	return s
}

// withScope returns ctx carrying a scope like ctx's, changed by f.
func withScope(ctx context.Context, f func(*scope)) context.Context {
	var s scope
	if parent := scopeFrom(ctx); parent != nil {
		s = *parent
	}
	f(&s)
	return context.WithValue(ctx, call.ScopeKey{}, &s)
}

// With returns a context that scopes an agent run: pass it to the
// executor's run (or to toolsafe.Tool.Run). Every call made on it is
// recorded in l under runID. A run scoped again with the same ID and
// ledger, or continued with Resume, is a resumed run: the n-th call of a
// tool with the same input (the same JSON, whatever its key order or
// spacing) that already answered in the run is answered from its entry,
// without calling the tool (middleware.Result.Replayed); one whose outcome
// is unknown is sent again with its old idempotency key (not at all by a
// tool without keys: the model is told to check first); calls beyond
// those are new. Tools that only read are always called again.
//
// Within the run, a call made while an identical one (the same tool and
// canonical input) is in flight is not made: it waits for that call and
// shares its outcome, its answer (Replayed), its failure or its pause
// (under its own call ID), and the loop guard counts one call. Its
// caller's cancellation ends only its own wait. An identical call made
// after the first ended is a new call. The scopes that Resume makes of the
// run on ctx share its calls in flight.
//
// A nil l means the process's default ledger (DefaultLedger). An empty
// runID makes up a random one (approval.Required.RunID carries it).
// Without With, calls are not recorded and nothing is replayed.
func With(ctx context.Context, runID string, l Ledger) context.Context {
	return withRun(ctx, runID, l, false)
}

func withRun(ctx context.Context, runID string, l Ledger, resumed bool) context.Context {
	if l == nil {
		l = DefaultLedger()
	}
	if runID == "" {
		runID = "run_" + call.RandomHex(8)
	}
	r := &state{id: runID, ledger: l, resumed: resumed, cursors: map[groupKey]*cursor{}}
	if p := scopeFrom(ctx); resumed && p != nil && p.run != nil && p.run.id == runID {
		r.flights = p.run.flights // the same run, on the same ledger (Resume takes ctx's)
	} else {
		r.flights = &call.Flights{}
	}
	return withScope(ctx, func(s *scope) { s.run = r })
}

// ID returns the ID of the run ctx is scoped to (see With), or "".
func ID(ctx context.Context) string {
	if s := scopeFrom(ctx); s != nil {
		return s.RunID()
	}
	return ""
}

// RunID is the run's ID (call.Scope: the approval gate names the run
// in its requests by it), or "" when the scope only resumes a call outside a
// run.
func (s *scope) RunID() string {
	if s.run == nil {
		return ""
	}
	return s.run.id
}

// held returns nil unless the scope resumes a paused run (Resume) that its
// ledger does not hold (an error wrapping ErrNotHeld) or cannot say (the
// ledger's error). The ledger is asked once per scope, on its first call.
func (s *scope) held(ctx context.Context) error {
	r := s.run
	if !r.resumed || r.held.Load() {
		return nil
	}
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	if r.held.Load() {
		return nil
	}
	ok, err := r.ledger.Holds(ctx, r.id)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: run %q; resume it on a context scoped on the ledger that recorded it, e.g. run.Resume(run.With(ctx, \"\", ledger), ar)", ErrNotHeld, r.id)
	}
	r.held.Store(true)
	return nil
}

// begin records the intent of the call e in the run's ledger, at the
// scope's next position among the calls of e.Tool with e.Input, or takes
// over the earlier entry the ledger finds there (see Ledger.Begin).
func (s *scope) begin(ctx context.Context, e Entry) (Begun, error) {
	r := s.run
	r.mu.Lock()
	k := groupKey{e.Tool, e.Input}
	c := r.cursors[k]
	if c == nil {
		c = &cursor{}
		r.cursors[k] = c
	}
	r.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	e.N, e.Pending = c.next, true
	if len(c.free) > 0 {
		e.N = c.free[0]
	}
	switch {
	case c.unsure != "":
		e.Claim = c.unsure
	case e.Claim == "":
		e.Claim = call.RandomHex(8)
	}
	b, err := r.ledger.Begin(ctx, r.id, e)
	if err != nil {
		c.unsure = e.Claim // it may have been recorded all the same
		return Begun{}, err
	}
	c.unsure = ""
	n := b.Entry.N
	for i, p := range c.free {
		if p == n {
			c.free = append(c.free[:i], c.free[i+1:]...)
			break
		}
	}
	c.next = max(c.next, n+1)
	return b, nil
}

// finishEntry records how the call e ended (see Ledger.Finish).
func (s *scope) finishEntry(ctx context.Context, e Entry) (Finished, error) {
	return s.run.ledger.Finish(ctx, s.run.id, e)
}

// flights are the run's calls in flight (see call.Flights).
func (s *scope) flights() *call.Flights { return s.run.flights }

// unreadable notes the call e, whose entry could not be read
// (ErrCorrupt): unless it only reads (it runs unrecorded), it was not made
// and counts as failed for good. It reports whether e is the first such
// call of e.Tool with e.Input in this scope: the one to log.
func (s *scope) unreadable(e Entry) bool {
	u := &s.run.unreadable
	u.Lock()
	defer u.Unlock()
	if u.said == nil {
		u.groups, u.perTool, u.said = map[groupKey]int{}, map[string]int{}, map[groupKey]bool{}
	}
	k := groupKey{e.Tool, e.Input}
	if !e.ReadOnly && !e.Alternative {
		u.total++
		u.perTool[e.Tool]++
		u.groups[k]++
	}
	first := !u.said[k]
	u.said[k] = true
	return first
}

// release gives the position of e back to the scope: its call was not
// made (it paused), so the scope's next identical call takes it over.
func (s *scope) release(e Entry) {
	r := s.run
	r.mu.Lock()
	c := r.cursors[groupKey{e.Tool, e.Input}]
	r.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.free {
		if p >= e.N {
			if p > e.N {
				c.free = append(c.free[:i], append([]int{e.N}, c.free[i:]...)...)
			}
			return
		}
	}
	c.free = append(c.free, e.N)
}

// admit checks the new call b against l (see Limits), with the calls this
// scope could not record counted too.
func (s *scope) admit(l Limits, b Begun) error {
	c := b.Counts
	u := &s.run.unreadable
	u.Lock()
	if u.total > 0 {
		k := groupKey{b.Entry.Tool, b.Entry.Input}
		c.Total += u.total
		c.Tool += u.perTool[b.Entry.Tool]
		c.Identical += u.groups[k]
		c.IdenticalFailed += u.groups[k]
		c.Final = c.Final || u.groups[k] > 0
	}
	u.Unlock()
	return l.check(c)
}
