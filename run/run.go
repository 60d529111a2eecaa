package run

import (
	"context"
	"errors"
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
// # The state of an entry
//
// Each entry of a run is one call of a tool with an input at a position N,
// the N-th such call of the run (from 0); it keeps the call's idempotency
// Key and, while Pending, the Claim of the call that holds its intent. A
// Ledger is this sequential machine, each operation atomic:
//
//	Begin(call: tool, input, from N, Key, Claim)
//	  the first entry of the tool and input at N or later that the call continues:
//	    Pending with the call's Claim   its own intent (an earlier Begin whose reply was
//	                                    lost): New, counted once, the counts before it
//	    Open                            Pending, under the call's Claim: New, counted again
//	    Pending (another Claim),
//	    Answered, Unknown               as it stands, not New: Answered is replayed,
//	                                    the others are an unknown outcome
//	  none: a new entry, Pending{Key, Claim}, at the first free position at or after N: New
//	  (a ReadOnly call continues any entry but a Refused one, and is never New then)
//
//	Finish(entry N of tool and input, with the entry's Key, by Claim, outcome)
//	  Answered stands: never replaced. The caller replays it (Finished.Answer).
//	  outcome Answered                  written over any other status
//	  outcome Unknown                   written over Pending, Open, Failed, Refused
//	  outcome Failed, Open, Refused     written only over Pending with the caller's Claim:
//	                                    only the call that holds an intent says it was not
//	                                    applied; another call that sent it again under its
//	                                    key knows only about its own attempts
//	  a ReadOnly entry (it only counts its call) is written by every Finish of its Key
//	  an entry the ledger no longer keeps, or with another Key, is not written
//
// So an entry moves Pending → Answered | Unknown | Failed | Open | Refused,
// Open → Pending (taken over), and Open, Failed, Refused and Unknown on to
// Unknown or Answered when another call that sent it again learns more;
// never out of Answered. Begin is idempotent for one Claim and Finish for
// one outcome, so a caller may repeat either after a lost reply. A bounded
// ledger may also drop an entry (see MemoryLedger): its call is forgotten.
//
// # Errors
//
// A Ledger must be safe for concurrent use, and Begin and Finish must each
// be atomic. Its methods run on the caller's goroutine, outside the tool's
// deadline and attempt timeout, so they must return promptly: bound every
// operation (redisstore's Ledger waits at most its Store's timeout, 50 ms
// by default). A Ledger that cannot answer returns an error: the call of
// a tool with side effects is then not made (the store's condition, which
// the model hears as "temporarily unavailable"); one that only reads goes
// on unrecorded. An entry it cannot read (corrupt, or written by something
// else) is an error wrapping ErrCorrupt: that call is not made and fails
// for good, whatever the tool.
type Ledger interface {
	// Begin records the intent of the call e of run runID (e.Pending set,
	// e.N the first position the caller may take, e.Claim the caller's), or
	// finds the earlier entry it continues, as the machine above says.
	// Begun says which; its Entry carries the caller's Claim.
	Begin(ctx context.Context, runID string, e Entry) (Begun, error)
	// Finish records how the call e, as Begin returned it with its outcome
	// set, ended, as the machine above says: when it is written, the entry
	// (e.Tool, e.Input, e.N) now says so, and the counts follow.
	Finish(ctx context.Context, runID string, e Entry) (Finished, error)
	// Holds reports whether the ledger keeps the run runID.
	Holds(ctx context.Context, runID string) (bool, error)
}

// ErrCorrupt is the error, wrapped, of a Ledger operation that found an
// entry or a count of the run it cannot read: not JSON, a status it does
// not know, a key of another type. It is not an outage, which passes: the
// call is not made, it fails for good (tool-failed, not Retryable), the
// loop guard counts it, and it is logged once at ERROR.
var ErrCorrupt = errors.New("toolsafe: the run ledger holds an entry it cannot read")

// Finished is what Ledger.Finish made of a call's outcome.
type Finished struct {
	// Written reports that the outcome was recorded.
	Written bool
	// Answer is, when the outcome was not written because the entry holds
	// an answer already (another call that continued the same entry, such
	// as a second run resumed from the same pause, answered first), that
	// answer: a settled answer is never replaced, and the call replays it.
	// Nil otherwise.
	Answer *Entry
}

// Begun is what Ledger.Begin recorded or found for a call.
type Begun struct {
	// Entry is the call's entry: the one recorded, or the earlier one it
	// takes over (its N, Key and Status say which call it continues).
	Entry Entry
	// New reports that Entry is a new call of the run: recorded now, or an
	// Open entry taken over (a fallback's alternative too). Not New means
	// the call continues an earlier one (Answered, Unknown, or Pending under
	// another Claim). The loop guard checks only new calls, and never a
	// fallback's alternative, which is part of its call.
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
	// Claim names the call that holds the entry's intent while it is
	// Pending: random, made by each call for itself, unlike Key, which the
	// calls that continue one another share (two runs resumed from one
	// pause have the same Key, never the same Claim). A call whose Begin
	// got no answer (a lost reply) begins again with the same Claim, so it
	// finds its own intent, not another call's; a call without one ("")
	// has no intent of its own to find. Entries read back for inspection
	// leave it empty.
	Claim string
	// CallID is the call's ID.
	CallID string
	// Pending reports that the call's intent is recorded and its outcome
	// not (yet): it is running, or it ended without its outcome written
	// (a crash, a store outage). Another call takes it as an unknown
	// outcome; the call that holds it (Claim) as its own.
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

// writes reports whether Finish records an outcome with status to over an
// entry with status from (see Ledger): own reports that the entry is
// Pending under the finishing call's Claim, readOnly that it only counts
// a read.
func writes(from, to Status, own, readOnly bool) bool {
	switch {
	case readOnly:
		return true
	case from == StatusAnswered:
		return false
	case to == StatusAnswered:
		return true
	case to == StatusUnknown:
		return from != StatusUnknown
	}
	return own
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
