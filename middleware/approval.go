package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"

	"github.com/tmc/langchaingo/tools"
)

// Decision is an Approver's answer for one call. The zero Decision is
// Pending, so an Approver that forgets to decide never lets a call through.
type Decision int

const (
	// Pending means nobody has decided yet: the call pauses with
	// *ApprovalRequired and the agent run stops until it is resumed.
	Pending Decision = iota
	// Approved lets the call (or, for a destructive tool, this attempt) run.
	Approved
	// Denied refuses the call: the model is told, with kind
	// approval-denied, not to call it again for this request.
	Denied
)

// String returns "pending", "approved" or "denied".
func (d Decision) String() string {
	switch d {
	case Approved:
		return "approved"
	case Denied:
		return "denied"
	}
	return "pending"
}

// CallInfo is what an Approver is asked about: one attempt of one call.
type CallInfo struct {
	// Tool is the tool's name, CallID the call's ID.
	Tool, CallID string
	// Input is the input of the call, as the model gave it.
	Input string
	// Attempt is the number of the attempt about to run: 1 for the first,
	// 2 for the first retry. Only a destructive tool is asked again after 1.
	Attempt int
	// IdempotencyKey is the call's key, the same for every attempt.
	IdempotencyKey string
	// Destructive reports whether every attempt needs its own approval.
	Destructive bool
	// MayHaveApplied reports whether an earlier attempt of this call may
	// already have been applied upstream (see MayHaveApplied): approving
	// sends it again, with the same idempotency key.
	MayHaveApplied bool

	runID string // the run the call is part of, for ApprovalRequired
	// canon is canonFrom in canonical form, made by the gate; canonFrom is
	// Input as it was then (an approver may pass on a changed CallInfo).
	canon, canonFrom string
}

// Approver decides whether a call may run. It is asked by Gate, once per
// call or once per attempt (see GateMode), before the attempt begins.
// Decide must be safe for concurrent use. An error means it could not
// decide: the gate fails closed and the call pauses (*ApprovalRequired with
// Err set), it never runs.
type Approver interface {
	// Decide answers for one attempt of one call. It must honour ctx: stop
	// and return when ctx ends. The wait for it is bounded by the call's
	// deadline (toolsafe.WithDeadline) and the caller's context, not by the
	// attempt timeout (WithTimeout), which starts only once the attempt is
	// approved: an approver that asks a person may take as long as the
	// deadline allows. When ctx ends first the gate returns anyway, even if
	// Decide ignores ctx: its answer, when it comes, is dropped (a grant it
	// used up is lost), and the call ends with tool-timeout, saying it was
	// still waiting for approval, or with ctx.Err() for the caller's own
	// cancellation. A panic in Decide is recovered, logged at ERROR with the
	// stack, and treated as an error: the call pauses, it never runs.
	Decide(ctx context.Context, call CallInfo) (Decision, error)
}

// ApproverFunc adapts a function to the Approver interface.
type ApproverFunc func(ctx context.Context, call CallInfo) (Decision, error)

// Decide calls f.
func (f ApproverFunc) Decide(ctx context.Context, call CallInfo) (Decision, error) {
	return f(ctx, call)
}

// GateMode says how often Gate asks.
type GateMode int

const (
	// ApproveCall asks once per call: the approval of the first attempt
	// covers the retries of the same call (same input, same idempotency
	// key). For a tool whose retries are harmless, or idempotent.
	ApproveCall GateMode = iota
	// ApproveEachAttempt asks before every attempt, so each consumes an
	// approval of its own: a retry after a timeout pauses for a fresh one
	// instead of repeating a destructive action nobody re-approved.
	ApproveEachAttempt
)

// Gate is the approval gate: it asks a before an attempt and runs it only
// when approved. toolsafe places it inside the retry and the side-effect
// guard and outside the circuit breaker and bulkhead, so it is asked before
// any permit is taken (a person's slow answer holds no bulkhead slot and no
// half-open probe) and, for a destructive tool (ApproveEachAttempt), again
// before every attempt.
//
// A gate decides for itself: an approval it records covers only its own
// later attempts of the same call and input (ApproveCall), never another
// gate's, whether stacked on the same tool or inside a tool the call runs.
// Inputs are compared as canonical JSON (see Canonical); an input whose
// keys repeat or differ only in case ends the attempt as args-invalid before
// anyone is asked.
//
// The attempt ends with:
//   - ctx.Err() when ctx has ended before a is asked (a is not asked, so a
//     single-use grant is not used up) or while a decides: the gate gives
//     control back when ctx ends, even if a ignores it, and the call
//     remembers that it was waiting for approval (so a deadline that passed
//     then says the tool was never called, and no fallback runs);
//   - *ApprovalRequired when a says Pending, fails or panics (an error: the
//     agent run stops; nothing ran, so it is never retried, counted by a
//     circuit breaker or routed to a fallback);
//   - an approval-denied error when a says Denied;
//   - the tool's own outcome when a says Approved.
//
// A nil a pauses every call: a gate can never be bypassed by a missing
// approver. Gate is safe for concurrent use when a is.
func Gate(a Approver, mode GateMode) Middleware {
	g := &gate{approver: a, mode: mode}
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			return g.call(ctx, next, input)
		})
	}
}

// gate is one Gate: its identity is what its approvals are recorded under.
type gate struct {
	approver Approver
	mode     GateMode
	stuck    atomic.Int64 // decisions still running after their call ended
}

func (g *gate) call(ctx context.Context, next tools.Tool, input string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err // nobody to run it for: ask nobody, use up no grant
	}
	ctx, call := ensure(ctx, next.Name(), input)
	canon, err := call.canonical(input)
	if err != nil {
		return "", err
	}
	if g.mode == ApproveCall && call.approved(g, canon) {
		return next.Call(ctx, input)
	}
	info := CallInfo{
		Tool:           next.Name(),
		CallID:         call.ID(),
		Input:          input,
		Attempt:        call.Attempts() + 1,
		IdempotencyKey: call.Key(),
		Destructive:    g.mode == ApproveEachAttempt,
		MayHaveApplied: call.mayHaveApplied(),
		runID:          RunID(ctx),
		canon:          canon,
		canonFrom:      input,
	}
	decision := Pending
	switch {
	case g.approver == nil:
	case g.stuck.Load() >= DefaultMaxAbandoned:
		// The approver ignores its context and earlier decisions pile up:
		// fail closed without starting one more.
		return "", pause(info, "the approver could not decide", errApproverStuck)
	default:
		call.record(Waiting{For: WaitingForApproval})
		decision, err = g.decide(ctx, info, call)
	}
	if ctx.Err() != nil {
		return "", ctx.Err() // still waiting for approval, as the record says
	}
	call.record(Waiting{For: NotWaiting})
	switch {
	case err != nil:
		logAt(ctx, call, slog.LevelWarn, "toolsafe: the approver could not decide; the call pauses", "attempt", info.Attempt)
		debugLog(ctx, call, "toolsafe: the approver could not decide", "attempt", info.Attempt, "error", errorText(err))
		return "", pause(info, "the approver could not decide", err)
	case decision == Approved:
		if g.mode == ApproveCall {
			call.approve(g, canon)
		}
		return next.Call(ctx, input)
	case decision == Denied:
		return "", errDenied
	}
	return "", pause(info, "", nil)
}

// errApproverStuck fails a gate closed whose approver has too many
// decisions still running after their calls ended.
var errApproverStuck = errors.New("toolsafe: the approver is still deciding earlier calls that ended: it ignores its context")

// decide asks the approver about info and returns its answer, or Pending
// and ctx.Err() as soon as ctx ends, even if the approver ignores ctx: then
// it goes on in the background, counted in g.stuck until it returns, and
// its answer is dropped. When ctx can never end, it runs on the caller's
// goroutine. A panic in it is recovered, logged (its type and stack at
// ERROR, its value at DEBUG), and returned as an error, so the gate fails
// closed.
func (g *gate) decide(ctx context.Context, info CallInfo, call *Call) (Decision, error) {
	if ctx.Done() == nil {
		return safeDecide(ctx, g.approver, info, call)
	}
	type answer struct {
		d   Decision
		err error
	}
	done := make(chan answer, 1) // buffered: an abandoned Decide never blocks
	const running, left, finished = 0, 1, 2
	var state atomic.Int32
	go func() {
		d, err := safeDecide(ctx, g.approver, info, call)
		if !state.CompareAndSwap(running, finished) {
			g.stuck.Add(-1) // the caller left and counted it
		}
		done <- answer{d, err}
	}()
	select {
	case ans := <-done:
		return ans.d, ans.err
	case <-ctx.Done():
		if state.CompareAndSwap(running, left) {
			g.stuck.Add(1)
		}
		return Pending, ctx.Err()
	}
}

// safeDecide calls a.Decide, turning a panic into an error.
func safeDecide(ctx context.Context, a Approver, info CallInfo, call *Call) (d Decision, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		logPanic(ctx, call, "approver", r, debug.Stack(), "attempt", info.Attempt)
		d, err = Pending, &panicError{who: "the approver", value: r}
	}()
	return a.Decide(ctx, info)
}

// pause builds the *ApprovalRequired for info.
func pause(info CallInfo, reason string, err error) *ApprovalRequired {
	if reason == "" {
		switch {
		case info.Attempt > 1 && info.MayHaveApplied:
			reason = fmt.Sprintf("attempt %d of a destructive action needs its own approval; the previous attempt may have been applied, and approving sends it again with the same idempotency key", info.Attempt)
		case info.Attempt > 1:
			reason = fmt.Sprintf("attempt %d of a destructive action needs its own approval", info.Attempt)
		default:
			reason = "no approval has been granted for this input"
		}
	}
	return &ApprovalRequired{
		RunID:          info.runID,
		Tool:           info.Tool,
		CallID:         info.CallID,
		Input:          info.Input,
		Reason:         reason,
		Attempt:        info.Attempt,
		IdempotencyKey: info.IdempotencyKey,
		Err:            err,
	}
}
