package layer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/fault"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// runScope is what package run keeps of a scoped run, as its layers use it.
type runScope interface {
	call.Scope
	ID() string
	Held(ctx context.Context) error
	Begin(ctx context.Context, e run.Entry) (run.Begun, error)
	Finish(ctx context.Context, e run.Entry) error
	Release(e run.Entry)
	Admit(l run.Limits, b run.Begun) error
}

// runOf returns the run the call c is part of, or nil outside a scoped run.
func runOf(c *call.Call) runScope {
	if s, ok := c.Scope().(runScope); ok && s.ID() != "" {
		return s
	}
	return nil
}

// runID is the ID of the run the call c is part of, or "".
func runID(c *call.Call) string {
	if s := runOf(c); s != nil {
		return s.ID()
	}
	return ""
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

// RunLedger is the run-ledger layer, inside argument validation and outside
// the fallback: in a scoped run (run.With), every call records its intent
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
// again.
//
// When the intent cannot be recorded, a call with replay is not made: it
// ends as tool-busy, "temporarily unavailable", with the ledger's error
// as its Cause; one without replay runs unrecorded. A run resumed
// (run.Resume) on a ledger that does not hold it calls no tool: the call
// returns an error wrapping run.ErrNotHeld. Outside a scoped run it does
// nothing.
func RunLedger(replay, resend bool) middleware.Middleware {
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

// runCall runs the call of next with input in run r (see RunLedger).
func runCall(ctx context.Context, r runScope, c *call.Call, next tools.Tool, input string, replay, resend bool) (string, error) {
	canon, err := c.Canonical(input)
	if err != nil {
		return "", err
	}
	if err := r.Held(ctx); err != nil {
		if errors.Is(err, run.ErrNotHeld) {
			call.LogAt(ctx, c, slog.LevelError, "toolsafe: the resumed run is not in its ledger; no tool is called", "run", r.ID())
			return "", middleware.Permanent(err)
		}
		return unrecorded(ctx, r, c, next, input, replay, err)
	}
	key, fixed := c.FixedKey()
	if !fixed {
		key = call.RandomHex(16)
	}
	e := run.Entry{Tool: next.Name(), Input: canon, Key: key, ReadOnly: !replay, Alternative: c.IsAlternative(), At: time.Now()}
	if c.IDKnown() {
		e.CallID = c.ID()
	}
	b, err := r.Begin(ctx, e)
	if err != nil {
		return unrecorded(ctx, r, c, next, input, replay, err)
	}
	e = b.Entry
	c.AdoptKey(e.Key)
	if !b.New && replay {
		switch s := e.Status(); {
		case s == run.StatusAnswered:
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
	finish(ctx, r, c, e, out, err, replay)
	return out, err
}

// finish records the outcome of the call e, which returned out and err.
func finish(ctx context.Context, r runScope, c *call.Call, e run.Entry, out string, err error, replay bool) {
	e.Pending, e.CallID, e.Fallback, e.At = false, c.ID(), c.FallbackName(), time.Now()
	e.Kind, e.Retryable, e.SideEffectUnknown, e.Output = "", false, false, ""
	if err == nil && replay {
		e.Output = out // a read is never replayed: its answer is not kept
	}
	if err != nil {
		f := call.FailureOf(ctx, err)
		e.Kind, e.Retryable, e.SideEffectUnknown = f.Kind, f.Retryable, f.SideEffect == middleware.SideEffectUnknown
		if e.Status() == run.StatusOpen {
			r.Release(e) // not made: the scope's next identical call makes it
		}
	}
	if ferr := r.Finish(context.WithoutCancel(ctx), e); ferr != nil {
		call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the call's outcome could not be added to the run ledger; a resumed run takes it as unknown", "run", r.ID())
		call.DebugLog(ctx, c, "toolsafe: the call's outcome could not be added to the run ledger", "run", r.ID(), "error", call.ErrorText(ferr))
	}
}

// unrecorded handles a call whose run ledger could not record it (err): a
// call with replay is not made, the store's condition; one without runs.
func unrecorded(ctx context.Context, r runScope, c *call.Call, next tools.Tool, input string, replay bool, err error) (string, error) {
	call.DebugLog(ctx, c, "toolsafe: the run ledger could not record the call", "run", r.ID(), "error", call.ErrorText(err))
	if !replay {
		return next.Call(ctx, input)
	}
	call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the run ledger is unavailable; the call is not made", "run", r.ID())
	return "", &fault.Unavailable{Err: err}
}

// LoopGuard is the loop guard, inside the run ledger and outside the
// fallback: in a scoped run, it refuses a new call (one the run ledger
// recorded now; a call answered from the ledger, or continuing an earlier
// one, is no new call), before any attempt, with call-limit when l's
// limits are reached, or when the same call failed already with a failure
// that told the model not to repeat it. The counts are the ledger's, as of
// the call's intent, so replicas that share the ledger share them and
// calls made at once cannot all pass a limit only one of them may; a call
// that paused for approval counts when it is made, and a fallback's
// alternative as part of its call. Without the run ledger layer outside
// it, or outside a scoped run, it does nothing.
func LoopGuard(l run.Limits) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			r := runOf(c)
			if r == nil {
				return next.Call(ctx, input)
			}
			if b, ok := c.Value(begunKey{}).(run.Begun); ok {
				if err := r.Admit(l, b); err != nil {
					return "", err
				}
			}
			return next.Call(ctx, input)
		})
	}
}
