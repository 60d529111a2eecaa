package run

import (
	"context"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// Ledger keeps the calls of agent runs, one Entry per call, so that a run
// resumed after a pause (or on another replica) does not repeat a call that
// already completed: the run ledger. A call of a run scoped with With
// records its intent with Begin before its first attempt, and its outcome
// with Finish when it ends; an entry that Begin recorded and Finish never
// reached is an unknown outcome. Each call reads and writes its own entry
// and the counts the loop guard needs, never the whole run, so its cost
// does not grow with the run's length. MemoryLedger is the in-process
// Ledger; a fleet of replicas shares one in a store such as Redis.
//
// A Ledger must be safe for concurrent use, and Begin and Finish must each
// be atomic. Its methods run on the caller's goroutine, outside the tool's
// deadline and attempt timeout, so they must return promptly: bound every
// operation (redisstore's Ledger waits at most its Store's timeout, 50 ms
// by default). A Ledger that cannot answer returns an error: the call of
// a tool with side effects is then not made (the store's condition, which
// the model hears as "temporarily unavailable"); one that only reads goes
// on unrecorded.
type Ledger interface {
	// Begin records the intent of the call e of run runID (e.Pending set,
	// e.N the first position the caller may take), or takes over an
	// earlier entry: the first of e.Tool with e.Input at position e.N or
	// later whose Status is Pending, Open, Answered or Unknown (for a
	// ReadOnly e: any but Refused). An Open entry taken over is Pending
	// again, counted as a new call. Without one, e is recorded at the
	// first free position at or after e.N. Begun says which.
	Begin(ctx context.Context, runID string, e Entry) (Begun, error)
	// Finish records how the call e, as Begin returned it with its outcome
	// set, ended: its entry (e.Tool, e.Input, e.N) now says so, and the
	// counts follow. An entry the ledger no longer keeps is not written.
	Finish(ctx context.Context, runID string, e Entry) error
	// Holds reports whether the ledger keeps the run runID.
	Holds(ctx context.Context, runID string) (bool, error)
}

// Begun is what Ledger.Begin recorded or found for a call.
type Begun struct {
	// Entry is the call's entry: the one recorded, or the earlier one it
	// takes over (its N, Key and Status say which call it continues).
	Entry Entry
	// New reports that Entry counts as a new call of the run: recorded now,
	// or an Open entry taken over. The loop guard checks only new calls.
	New bool
	// Counts are the run's calls before this one, when New.
	Counts Counts
}

// Counts are the calls of a run as the loop guard counts them: every
// entry but Open and Refused ones and fallbacks' alternatives (a fallback
// is part of its call).
type Counts struct {
	// Total counts the run's calls; Tool those of the call's tool;
	// Identical those of the tool with the same input, IdenticalFailed
	// the ones of them that ended with a failure.
	Total, Tool, Identical, IdenticalFailed int
	// Final reports that the identical call to end last was Final.
	Final bool
}

// Entry is one call of a run, as the ledger keeps it.
type Entry struct {
	// Tool is the tool called; Input its input in canonical form (see
	// canonical.JSON), so that calls with the same JSON match.
	Tool, Input string
	// N is the call's position among the run's calls of Tool with Input,
	// from 0: a resumed run's n-th such call continues the n-th entry.
	N int
	// Key is the call's idempotency key: the same for every attempt of the
	// call, and for a call that continues it in a resumed run.
	Key string
	// CallID is the call's ID.
	CallID string
	// Pending reports that the call's intent is recorded and its outcome
	// not (yet): it is running, or it ended without its outcome written
	// (a crash, a store outage). A resumed run takes it as an unknown
	// outcome.
	Pending bool
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
	// At is when the call began, then when it ended.
	At time.Time
	// ReadOnly reports that the tool only reads (no side effects, no
	// gate): a resumed run calls it again, so the entry only counts the
	// call. A bounded ledger drops such entries first.
	ReadOnly bool
	// Alternative reports that the call is a fallback's alternative,
	// made as part of another call of the run: it is not counted.
	Alternative bool
}

// Status is where the call of an Entry stands.
type Status int

const (
	// StatusPending: the intent is recorded, the outcome is not.
	StatusPending Status = iota
	// StatusOpen: the call was not made (it paused for approval, or its
	// caller canceled it before anything was applied); the next identical
	// call takes it over, under its key.
	StatusOpen
	// StatusAnswered: the call answered (Output).
	StatusAnswered
	// StatusUnknown: the call ended, and its action may have been applied.
	StatusUnknown
	// StatusFailed: the call failed, and nothing was applied.
	StatusFailed
	// StatusRefused: the loop guard refused the call; it made none.
	StatusRefused
)

// Status says where e's call stands.
func (e Entry) Status() Status {
	switch {
	case e.Pending:
		return StatusPending
	case e.Kind == "":
		return StatusAnswered
	case e.SideEffectUnknown:
		return StatusUnknown
	case e.Kind == middleware.KindApprovalRequired, e.Kind == middleware.KindCanceled:
		return StatusOpen
	case e.Kind == middleware.KindCallLimit:
		return StatusRefused
	}
	return StatusFailed
}

// Final reports whether e's call ended with a message telling the model
// not to make the same call again: its retries ran out, a circuit was
// open, approval was denied, the tool panicked, the loop guard refused it.
func (e Entry) Final() bool {
	if e.Pending {
		return false
	}
	switch e.Kind {
	case middleware.KindFailed, middleware.KindTimeout:
		return !e.Retryable
	case middleware.KindCircuitOpen, middleware.KindApprovalDenied, middleware.KindPanic, middleware.KindCallLimit:
		return true
	}
	return false
}

// takesOver reports whether a call (one that only reads, when readOnly)
// continues an earlier entry with status s instead of being a new call.
func takesOver(s Status, readOnly bool) bool {
	if readOnly {
		return s != StatusRefused
	}
	return s == StatusPending || s == StatusOpen || s == StatusAnswered || s == StatusUnknown
}

// counted reports whether an entry with status s counts as a call.
func counted(s Status) bool { return s != StatusOpen && s != StatusRefused }

// failed reports whether an entry with status s counts as a failed call.
func failed(s Status) bool { return s == StatusUnknown || s == StatusFailed }

// droppable reports whether a bounded ledger drops e before the others:
// it only reads, or it will never be replayed or continued.
func droppable(e Entry) bool {
	s := e.Status()
	return e.ReadOnly || s == StatusFailed || s == StatusRefused
}
