package layer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// runScope is what package run keeps of a scoped run, as its layers use it.
type runScope interface {
	call.Scope
	ID() string
	Ledger() run.Ledger
	Claim(entries []run.Entry, tool, input string, anyOutcome bool) (run.Entry, bool)
	ClaimKey(key string)
	Admit(l run.Limits, entries []run.Entry, e run.Entry) (*run.Entry, error)
	Land(f *run.Entry)
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

// entriesKey is the key under which the run ledger layer keeps the run's
// entries it read on the call record, for the loop guard inside it.
type entriesKey struct{}

// errLedger fails closed a call whose run ledger could not be read.
var errLedger = errors.New("toolsafe: the run's ledger could not be read, so it is unknown whether this call already ran")

// RunLedger is the run-ledger layer, inside argument validation and outside
// the fallback: in a scoped run (run.With), it appends every finished call
// to the run's ledger (its answer, or the kind of its failure and whether
// its action may have been applied; a pause is not finished) and, when
// replay is true, answers a resumed run's calls from it: the n-th call of
// the tool with the same canonical input that answered is answered again
// from its entry without calling the tool, recording Replayed (the
// approval gate is not asked again); one whose outcome was unknown is sent
// again with its old idempotency key, through every layer, gate included.
// toolsafe gives replay to tools that have side effects or an approval
// gate; a tool that only reads is always called again.
//
// When the ledger cannot be read, a tool with replay fails closed with
// tool-failed (not retried; the model is told not to call it again) rather
// than risk a second side effect; one without replay runs. Outside a
// scoped run it does nothing.
func RunLedger(replay bool) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			r := runOf(c)
			if r == nil {
				return next.Call(ctx, input)
			}
			// Out of line, so that a call outside a run keeps a small frame.
			return runCall(ctx, r, c, next, input, replay)
		})
	}
}

// runCall runs the call of next with input in run r (see RunLedger).
func runCall(ctx context.Context, r runScope, c *call.Call, next tools.Tool, input string, replay bool) (string, error) {
	canon, err := c.Canonical(input)
	if err != nil {
		return "", err
	}
	tool := next.Name()
	if replay {
		entries, err := r.Ledger().Entries(ctx, r.ID())
		if err == nil {
			c.SetValue(entriesKey{}, entries)
		}
		if err != nil {
			call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the run ledger could not be read; the call is refused", "run", r.ID())
			call.DebugLog(ctx, c, "toolsafe: the run ledger could not be read", "run", r.ID(), "error", call.ErrorText(err))
			return "", middleware.Permanent(errLedger)
		}
		if e, ok := r.Claim(entries, tool, canon, false); ok {
			if !e.SideEffectUnknown {
				c.AdoptID(e.CallID)
				c.Record(call.Replayed{Fallback: e.Fallback})
				return e.Output, nil
			}
			c.Continue(e.Key)
		}
	} else if entries, err := r.Ledger().Entries(ctx, r.ID()); err == nil {
		// A read is made again, but as the call it repeats: under its key,
		// so that the loop guard does not count it twice.
		c.SetValue(entriesKey{}, entries)
		if e, ok := r.Claim(entries, tool, canon, true); ok {
			c.AdoptKey(e.Key)
		}
	}
	out, err := next.Call(ctx, input)
	e := run.Entry{Tool: tool, Input: canon, CallID: c.ID(), At: time.Now(), ReadOnly: !replay}
	if replay {
		e.Output = out // a read is never replayed: its answer is not kept
	}
	if err != nil {
		f := call.FailureOf(ctx, err)
		if unfinished(f) {
			return out, err // not finished: nothing to record
		}
		e.Kind, e.Retryable, e.SideEffectUnknown, e.Output = f.Kind, f.Retryable, f.SideEffect == middleware.SideEffectUnknown, ""
	}
	e.Key, e.Fallback = c.Key(), c.FallbackName()
	r.ClaimKey(e.Key)
	if aerr := r.Ledger().Append(context.WithoutCancel(ctx), r.ID(), e); aerr != nil {
		call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the call could not be added to the run ledger; a resumed run may repeat it", "run", r.ID())
		call.DebugLog(ctx, c, "toolsafe: the call could not be added to the run ledger", "run", r.ID(), "error", call.ErrorText(aerr))
	}
	return out, err
}

// unfinished reports whether a call that ended with f is yet to be made: it
// paused for approval, or the caller canceled it before anything could
// have been applied.
func unfinished(f *middleware.Failure) bool {
	return f.Kind == middleware.KindApprovalRequired || (f.Kind == middleware.KindCanceled && f.SideEffect != middleware.SideEffectUnknown)
}

// LoopGuard is the loop guard, inside the run ledger (a call answered from
// the ledger is no new call and is not counted twice) and outside the
// fallback: in a scoped run, it refuses a call, before any attempt, with
// call-limit when the run's ledger shows that l's limits are reached, or
// that the same call failed already with a failure that told the model not
// to repeat it. The counts are the run's entries in its ledger, so
// replicas that share the ledger share them, and the calls still running
// on this run's context, so calls made at once cannot all pass a limit only
// one of them may; a call that paused for approval counts when it is made.
// Outside a scoped run it does nothing.
func LoopGuard(l run.Limits) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			c := call.From(ctx)
			r := runOf(c)
			if r == nil {
				return next.Call(ctx, input)
			}
			return guard(ctx, l, r, c, next, input)
		})
	}
}

// guard runs the call of next with input in run r, unless l refuses it
// (see LoopGuard).
func guard(ctx context.Context, l run.Limits, r runScope, c *call.Call, next tools.Tool, input string) (string, error) {
	canon, err := c.Canonical(input)
	if err != nil {
		return "", err
	}
	entries, ok := c.Value(entriesKey{}).([]run.Entry)
	if !ok {
		if entries, err = r.Ledger().Entries(ctx, r.ID()); err != nil {
			call.DebugLog(ctx, c, "toolsafe: the loop guard could not read the run ledger", "run", r.ID(), "error", call.ErrorText(err))
			return next.Call(ctx, input)
		}
	}
	flight, err := r.Admit(l, entries, run.Entry{Tool: next.Name(), Input: canon, Key: c.Key()})
	if err != nil {
		return "", err
	}
	out, err := next.Call(ctx, input)
	if err != nil && unfinished(call.FailureOf(ctx, err)) {
		r.Land(flight) // a pause: the call is made when it resumes
	}
	return out, err
}
