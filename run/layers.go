package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"
)

// runOf returns the run the call c is part of, or nil outside a scoped
// run.
func runOf(c *call.Call) *scope {
	if s, ok := c.Scope().(*scope); ok && s.RunID() != "" {
		return s
	}
	return nil
}

// wrap returns a tool with next's name and description and the given call.
func wrap(next tools.Tool, f func(ctx context.Context, input string) (string, error)) tools.Tool {
	return middleware.Func(next.Name(), next.Description(), f)
}

// begunKey is the key under which the run ledger layer keeps, on the call
// record, what the ledger began for a new call: the counts the loop guard
// inside it checks.
type begunKey struct{}

// outcomeUnknown ends a call of a tool without idempotency keys that
// continues an earlier call whose outcome is unknown: it is not sent
// again, and the model is told to check first.
func outcomeUnknown(tool string) error {
	return middleware.NewToolError("%s was not called again: the same call earlier in this request may have been applied, and its outcome is unknown. Check whether it was applied before calling %s again.", tool, tool)
}

// LedgerLayer returns the run-ledger layer: toolsafe.New places it in
// every tool's stack ("run ledger" in toolsafe.Layers), inside argument
// validation and outside the loop guard and the fallback; a stack built by
// hand with middleware.Chain puts it, and LoopGuard inside it, in the same
// place, inside a toolsafe call record (toolsafe's surface layer starts
// one; without one it does nothing). It is safe for concurrent use.
//
// In a scoped run (With), every call records its intent
// in the run's ledger before its first attempt and its outcome when it
// ends (a pause is no outcome: the call is made when it resumes). When
// replay is true, a resumed run's n-th call of the tool with the same
// canonical input is answered from the n-th entry when that call answered
// (Replayed; the approval gate is not asked again); an entry without an
// outcome, or whose action may have been applied, is an unknown outcome:
// sent again under its idempotency key through every layer when resend,
// else not sent, and the model is told to check first. toolsafe gives
// replay to tools with side effects or a gate, and resend to those that
// send keys or have no side effects; a tool that only reads is called
// again. A call that sent an entry again and finds, when it ends, that
// another call answered it first (two runs resumed from one pause) replays
// that answer: a settled answer is never replaced.
//
// A call made while an identical call of the same run (the same tool and
// canonical input) is in flight is not made: it waits for that call and
// shares its outcome, its answer, failure or pause, as Replayed (its own
// call ID in a pause), and the loop guard counts one call. Its caller's
// cancellation ends its wait (ctx.Err()), not the call it waits for; when
// that call's caller gives up before it is made, the waiting call is made
// itself. An identical call made after the first ended is a new call (the
// ledger's n-th entry), and a fallback's alternative is never joined.
//
// When the intent cannot be recorded, a call with replay is not made: it
// ends as tool-busy, "temporarily unavailable", with the ledger's error
// as its Cause; one without replay runs unrecorded. When the ledger holds
// an entry it cannot read (ErrCorrupt), a call with replay is not made
// and fails for good (tool-failed, not Retryable), logged once per run
// scope at ERROR and counted by the loop guard. A run resumed
// (Resume) on a ledger that does not hold it calls no tool: the call
// returns an error wrapping ErrNotHeld. Outside a scoped run it does
// nothing.
func LedgerLayer(replay, resend bool) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			r := runOf(c)
			if r == nil {
				return next.Call(ctx, input)
			}
			// Out of line, so that a call outside a run keeps a small frame.
			return runCall(ctx, r, c, next, input, replay, resend)
		})
	}
}

// flightKey names the identical calls of a run: a tool and a canonical
// input.
type flightKey struct{ tool, input string }

// runCall runs the call of next with input in run r (see LedgerLayer): it
// waits for an identical call in flight, or is the call in flight.
func runCall(ctx context.Context, r *scope, c *call.Call, next tools.Tool, input string, replay, resend bool) (string, error) {
	canon, err := c.Canonical(input)
	if err != nil {
		return "", err
	}
	e := Entry{Tool: next.Name(), Input: canon, ReadOnly: !replay, Alternative: c.IsAlternative()}
	if err := r.held(ctx); err != nil {
		if errors.Is(err, ErrNotHeld) {
			call.LogAt(ctx, c, slog.LevelError, "toolsafe: the resumed run is not in its ledger; no tool is called", "run", r.RunID())
			return "", &call.ForProgram{Err: middleware.Permanent(err)}
		}
		return unrecorded(ctx, r, c, next, input, e, err)
	}
	if e.Alternative {
		return ledgerCall(ctx, r, c, next, input, e, resend) // part of its call, which is in flight itself
	}
	k, fs := flightKey{e.Tool, canon}, r.flights()
	for {
		lead, wait := fs.Join(k, c)
		if wait == nil {
			return leadCall(ctx, r, c, next, input, e, resend, fs, k, lead)
		}
		call.DebugLog(ctx, c, "toolsafe: an identical call of the run is in flight; this call waits for it and shares its outcome",
			"run", r.RunID(), "joined", wait.Leader().ID())
		o, ok := wait.Wait(ctx)
		if !ok {
			return "", ctx.Err() // the call it waited for goes on
		}
		if !o.Gone {
			return joined(c, wait.Leader(), o)
		}
		// The call it waited for was not made: this one is, or waits again.
	}
}

// leadCall makes the call e, in flight as f under k in fs (nil f: on its
// own), and lands f with its outcome for the identical calls waiting.
func leadCall(ctx context.Context, r *scope, c *call.Call, next tools.Tool, input string, e Entry, resend bool, fs *call.Flights, k flightKey, f *call.Flight) (string, error) {
	if f == nil {
		return ledgerCall(ctx, r, c, next, input, e, resend)
	}
	landed := false
	defer func() {
		if !landed { // a panic: the calls waiting are made on their own
			fs.Land(k, f, call.Outcome{Gone: true})
		}
	}()
	out, err := ledgerCall(ctx, r, c, next, input, e, resend)
	o := call.Outcome{Output: out, Err: err, Fallback: c.FallbackName()}
	if err != nil {
		if o.Failure = call.FailureOf(ctx, err); o.Failure.Kind == middleware.KindCanceled {
			o = call.Outcome{Gone: true} // its caller gave up; theirs did not
		}
	}
	fs.Land(k, f, o)
	landed = true
	return out, err
}

// joined ends the call c with the outcome o of the identical call leader,
// which was in flight when c was made: its answer, its failure, or its
// pause, named for c's call ID so that c's host resumes c.
func joined(c *call.Call, leader *call.Call, o call.Outcome) (string, error) {
	c.Record(call.Replayed{Fallback: o.Fallback, Joined: leader.ID()})
	if o.Err == nil {
		return o.Output, nil
	}
	if ar, ok := errors.AsType[*approval.Required](o.Err); ok {
		cp := *ar
		cp.CallID = c.ID()
		return "", &cp
	}
	c.Adopt(o.Failure)
	return "", o.Failure
}

// ledgerCall records the call e of next with input in run r, or finds the
// earlier entry it continues, and makes it unless that entry answers it.
func ledgerCall(ctx context.Context, r *scope, c *call.Call, next tools.Tool, input string, e Entry, resend bool) (string, error) {
	key, fixed := c.FixedKey()
	if !fixed {
		key = call.RandomHex(16)
	}
	e.Key, e.At = key, time.Now()
	if c.IDKnown() {
		e.CallID = c.ID()
	}
	b, err := r.begin(ctx, e)
	if err == nil {
		err = checkBegun(e, b)
	}
	if err != nil {
		return unrecorded(ctx, r, c, next, input, e, err)
	}
	replay := !e.ReadOnly
	e = b.Entry
	c.AdoptKey(e.Key)
	if !b.New && replay {
		switch s := e.Status(); {
		case s == StatusAnswered:
			c.AdoptID(e.CallID)
			c.Record(call.Replayed{Fallback: e.Fallback})
			return e.Output, nil
		case !resend:
			c.MarkSideEffectUnknown()
			return "", outcomeUnknown(e.Tool)
		default:
			c.Continue(e.Key) // Pending or Unknown: sent again, under its key
		}
	}
	if b.New && !e.Alternative {
		c.SetValue(begunKey{}, b)
	}
	out, err := next.Call(ctx, input)
	return finish(ctx, r, c, e, out, err, replay)
}

// checkBegun returns an error wrapping ErrCorrupt when b, the ledger's
// answer to the Begin of e, is not one its machine gives (see Ledger):
// another call's entry, or one the call cannot continue.
func checkBegun(e Entry, b Begun) error {
	got := b.Entry
	s := got.Status()
	ok := got.Tool == e.Tool && got.Input == e.Input && got.N >= 0
	switch {
	case b.New:
		ok = ok && s == StatusPending
	case e.ReadOnly:
		ok = ok && s != StatusRefused
	default:
		ok = ok && (s == StatusPending || s == StatusAnswered || s == StatusUnknown)
	}
	if !ok {
		return fmt.Errorf("%w: its Begin answered with an entry the call cannot be or continue (status %d at position %d)", ErrCorrupt, s, got.N)
	}
	return nil
}

// finish records the outcome of the call e, which returned out and err,
// and returns what the call answers: out and err, or the answer another
// call recorded first for the same entry (a settled answer is never
// replaced: this call replays it).
func finish(ctx context.Context, r *scope, c *call.Call, e Entry, out string, err error, replay bool) (string, error) {
	e.Pending, e.CallID, e.Fallback, e.At = false, c.ID(), c.FallbackName(), time.Now()
	e.Kind, e.Retryable, e.SideEffectUnknown, e.Output = "", false, false, ""
	if err == nil && replay {
		e.Output = out // a read is never replayed: its answer is not kept
	}
	if err != nil {
		f := call.FailureOf(ctx, err)
		e.Kind, e.Retryable, e.SideEffectUnknown = f.Kind, f.Retryable, f.SideEffect == middleware.SideEffectUnknown
		if e.Status() == StatusOpen {
			r.release(e) // not made: the scope's next identical call makes it
		}
	}
	fin, ferr := r.finishEntry(context.WithoutCancel(ctx), e)
	switch {
	case ferr != nil:
		level := slog.LevelWarn
		if errors.Is(ferr, ErrCorrupt) {
			level = slog.LevelError
		}
		call.LogAt(ctx, c, level, "toolsafe: the call's outcome could not be added to the run ledger; a resumed run takes it as unknown", "run", r.RunID())
		call.DebugLog(ctx, c, "toolsafe: the call's outcome could not be added to the run ledger", "run", r.RunID(), "error", call.ErrorText(ferr))
	case fin.Answer != nil && replay && ctx.Err() == nil:
		a := fin.Answer
		call.DebugLog(ctx, c, "toolsafe: another call of the run answered this entry first; its answer stands and is replayed", "run", r.RunID(), "position", e.N)
		c.Record(call.Replayed{Fallback: a.Fallback})
		return a.Output, nil
	}
	return out, err
}

// unrecorded handles a call e whose run ledger could not record it (err):
// a call with replay is not made, the store's condition (or, when the
// ledger cannot read its entry, failed for good); one without runs.
func unrecorded(ctx context.Context, r *scope, c *call.Call, next tools.Tool, input string, e Entry, err error) (string, error) {
	call.DebugLog(ctx, c, "toolsafe: the run ledger could not record the call", "run", r.RunID(), "error", call.ErrorText(err))
	if errors.Is(err, ErrCorrupt) {
		if r.unreadable(e) {
			call.LogAt(ctx, c, slog.LevelError, "toolsafe: the run ledger holds a record of the call that cannot be read; the call is not made and fails for good until it is repaired", "run", r.RunID())
		}
		if !e.ReadOnly {
			return "", &corrupt{err: err}
		}
	}
	if e.ReadOnly {
		return next.Call(ctx, input)
	}
	call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the run ledger is unavailable; the call is not made", "run", r.RunID())
	return "", &unavailable{err: err}
}

// LoopGuard returns the loop guard of l: toolsafe.New places it in every
// tool's stack ("loop guard" in toolsafe.Layers, the limits of
// toolsafe.WithCallLimits), inside LedgerLayer and outside the fallback. It
// is safe for concurrent use.
//
// In a scoped run, it refuses a new call (one the run ledger
// recorded now; a call answered from the ledger, or continuing an earlier
// one, is no new call), before any attempt, with call-limit when l's
// limits are reached, or when the same call failed already with a failure
// that told the model not to repeat it. The counts are the ledger's, as of
// the call's intent, so replicas that share the ledger share them and
// calls made at once cannot all pass a limit only one of them may; a call
// that paused for approval counts when it is made, and a fallback's
// alternative as part of its call. Without the run ledger layer outside
// it, or outside a scoped run, it does nothing.
func LoopGuard(l Limits) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			r := runOf(c)
			if r == nil {
				return next.Call(ctx, input)
			}
			if b, ok := c.Value(begunKey{}).(Begun); ok {
				if err := r.admit(l, b); err != nil {
					return "", err
				}
			}
			return next.Call(ctx, input)
		})
	}
}
