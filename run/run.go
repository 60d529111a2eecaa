package run

import (
	"context"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"
)

// Ledger keeps the calls of agent runs, so that a run resumed after a pause
// (or on another replica) does not repeat a call that already completed:
// the run ledger. Each finished call of a run scoped with With is
// appended as an Entry; a resumed run's calls are answered from the run's
// entries. A Ledger must be safe for concurrent use. MemoryLedger is
// the in-process one; a fleet of replicas shares one in a store such as
// Redis.
//
// A Ledger that cannot answer returns an error: toolsafe then fails closed
// for tools with side effects (it neither repeats nor replays the call, and
// says so), and goes on without replay for tools that only read.
//
// Its methods run on the caller's goroutine, outside the tool's deadline
// and attempt timeout, so they must return promptly: bound every operation
// (redisstore's Ledger waits at most its Store's timeout, 50 ms by
// default). Append is given a context that the end of the call does not
// cancel, so that a call that finished is recorded all the same.
type Ledger interface {
	// Append adds e to the entries of the run runID, after those already there.
	Append(ctx context.Context, runID string, e Entry) error
	// Entries returns the entries of the run runID, oldest first; none for a run it
	// does not know (or no longer keeps).
	Entries(ctx context.Context, runID string) ([]Entry, error)
}

// Entry is one finished call of a run.
type Entry struct {
	// Tool is the tool called; Input its input in canonical form (see
	// canonical.JSON), so that calls with the same JSON match.
	Tool, Input string
	// Key is the call's idempotency key: the same for every attempt of the
	// call, and for the call that continues it in a resumed run. Entries
	// with the same key are one call; the latest says how it ended.
	Key string
	// CallID is the call's ID.
	CallID string
	// Kind is the kind of the call's failure, "" when it answered.
	Kind middleware.Kind
	// Retryable is the failure's Retryable: false when its message told the
	// model not to repeat the call (see Limits).
	Retryable bool
	// SideEffectUnknown reports that the call's action may have been
	// applied without an answer: a resumed run sends it again with Key.
	SideEffectUnknown bool
	// Output is the call's answer when Kind is "" (none for a ReadOnly
	// entry, which is never replayed).
	Output string
	// Fallback is the alternative tool that answered, if one did.
	Fallback string
	// At is when the call finished.
	At time.Time
	// ReadOnly reports that the tool only reads (no side effects, no
	// gate): a resumed run calls it again, so the entry only counts the
	// call (see Limits). A bounded ledger drops such entries before
	// any other, so reads cannot push a completed side effect out.
	ReadOnly bool
}

// TrimEntries returns entries without n of them, for a ledger that keeps
// a bounded number per run: the oldest ReadOnly entries first, then, only
// when n is more than those, the oldest of the rest. The order of those
// kept is unchanged; entries is reused.
func TrimEntries(entries []Entry, n int) []Entry {
	if n <= 0 {
		return entries
	}
	readOnly := 0
	for _, e := range entries {
		if e.ReadOnly {
			readOnly++
		}
	}
	dropReads, dropOthers := min(n, readOnly), max(0, n-readOnly)
	kept := entries[:0]
	for _, e := range entries {
		switch {
		case e.ReadOnly && dropReads > 0:
			dropReads--
		case !e.ReadOnly && dropOthers > 0:
			dropOthers--
		default:
			kept = append(kept, e)
		}
	}
	clear(entries[len(kept):])
	return kept
}

// replayable reports whether a resumed run answers or continues e instead
// of making a new call: e answered, or its action may have landed.
func (e Entry) replayable() bool { return e.Kind == "" || e.SideEffectUnknown }

// state is one scope of an agent run: what its calls have claimed among
// the run's entries. A new scope (With, or Resume) starts with nothing
// claimed, so its calls replay the run's entries in order.
type state struct {
	id     string
	ledger Ledger

	mu      sync.Mutex
	claimed map[string]bool // idempotency keys this scope has made or replayed
	// flights are the calls the loop guard let through that the ledger did
	// not show when last read: running, or finished since.
	flights []*Entry
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
// appended to l under runID. A run scoped again with the same ID and
// ledger, or continued with Resume, is a resumed run: the n-th call of a
// tool with the same input (the same JSON, whatever its key order or
// spacing) that already answered in the run is answered from its entry,
// without calling the tool (middleware.Result.Replayed); one whose outcome
// was unknown is sent again with its old idempotency key; calls beyond
// those are new. Tools that only read are always called again.
//
// A nil l means the process's default ledger (DefaultLedger). An empty
// runID makes up a random one (approval.Required.RunID carries it).
// Without With, calls are not recorded and nothing is replayed.
func With(ctx context.Context, runID string, l Ledger) context.Context {
	if l == nil {
		l = DefaultLedger()
	}
	if runID == "" {
		runID = "run_" + call.RandomHex(8)
	}
	r := &state{id: runID, ledger: l, claimed: map[string]bool{}}
	return withScope(ctx, func(s *scope) { s.run = r })
}

// ID returns the ID of the run ctx is scoped to (see With), or "".
func ID(ctx context.Context) string {
	if s := scopeFrom(ctx); s != nil {
		return s.ID()
	}
	return ""
}

// ID is the run's ID, or "" when the scope only resumes a call outside a
// run.
func (s *scope) ID() string {
	if s.run == nil {
		return ""
	}
	return s.run.id
}

// Ledger is the run's ledger, or nil outside a run.
func (s *scope) Ledger() Ledger {
	if s.run == nil {
		return nil
	}
	return s.run.ledger
}

// Claim returns the first entry of tool with input among entries that a
// resumed run answers or continues (any entry, when anyOutcome) and that
// this scope has not claimed yet, and claims it. Entries of one key are one
// call: the latest says how it ended, the first where it stands.
func (s *scope) Claim(entries []Entry, tool, input string, anyOutcome bool) (Entry, bool) {
	r := s.run
	r.mu.Lock()
	defer r.mu.Unlock()
	latest := map[string]int{}
	for i, e := range entries {
		if e.Tool == tool && e.Input == input {
			latest[e.Key] = i
		}
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Tool != tool || e.Input != input || seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		last := entries[latest[e.Key]]
		if !r.claimed[e.Key] && (anyOutcome || last.replayable()) {
			r.claimed[e.Key] = true
			return last, true
		}
	}
	return Entry{}, false
}

// ClaimKey claims the call with key: it is this scope's own.
func (s *scope) ClaimKey(key string) {
	r := s.run
	r.mu.Lock()
	r.claimed[key] = true
	r.mu.Unlock()
}
