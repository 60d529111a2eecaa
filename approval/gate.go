package approval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// Gate returns the approval gate of a: it asks a before an attempt and runs
// it only when approved. toolsafe.New places it (the "approval" layer of
// toolsafe.Layers, from toolsafe.WithApproval) inside the retry and the side-effect
// guard and outside the circuit breaker and bulkhead, so it is asked before
// any permit is taken (a person's slow answer holds no bulkhead slot and no
// half-open probe) and, for a destructive tool (ApproveEachAttempt), again
// before every attempt.
//
// A gate decides for itself: an approval it records covers only its own
// later attempts of the same call and input (ApproveCall), never another
// gate's, whether stacked on the same tool or inside a tool the call runs.
// Inputs are compared as canonical JSON (see canonical.JSON); an input whose
// keys repeat or differ only in case ends the attempt as args-invalid before
// anyone is asked.
//
// The attempt ends with:
//   - ctx.Err() when ctx has ended before a is asked (a is not asked, so a
//     single-use grant is not used up) or while a decides: the gate gives
//     control back when ctx ends, even if a ignores it, and the call
//     remembers that it was waiting for approval (so a deadline that passed
//     then says the tool was never called, and no fallback runs);
//   - *Required when a says Pending, fails or panics (an error: the
//     agent run stops; nothing ran, so it is never retried, counted by a
//     circuit breaker or routed to a fallback);
//   - an approval-denied error when a says Denied;
//   - the tool's own outcome when a says Approved.
//
// A nil a pauses every call: a gate can never be bypassed by a missing
// approver. Gate is safe for concurrent use when a is.
func Gate(a Approver, mode GateMode) middleware.Middleware {
	mw, _ := NewGate(a, mode)
	return mw
}

// NewGate is Gate, with announce, which records on the call in its context
// that the call's attempts go through this gate, before any of them has
// (see GatesOf): a stack calls it as the call begins, so that a layer
// outside the gate knows of it even when the call ends before reaching it.
func NewGate(a Approver, mode GateMode) (mw middleware.Middleware, announce func(ctx context.Context)) {
	g := &gate{approver: a, mode: mode}
	return g.layer, func(ctx context.Context) { g.passedBy(call.From(ctx)) }
}

// gate is one Gate: its identity is what its approvals are recorded under.
type gate struct {
	approver Approver
	mode     GateMode
	stuck    atomic.Int64 // decisions still running after their call ended
}

// layer puts g in front of next.
func (g *gate) layer(next tools.Tool) tools.Tool {
	return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
		return g.call(ctx, next, input)
	})
}

func (g *gate) call(ctx context.Context, next tools.Tool, input string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err // nobody to run it for: ask nobody, use up no grant
	}
	ctx, c := call.Ensure(ctx, next.Name(), input)
	g.passedBy(c)
	canon, err := c.Canonical(input)
	if err != nil {
		return "", err
	}
	if g.mode == ApproveCall {
		if run, ok := g.approved(c, canon); ok {
			return runApproved(ctx, next, input, run)
		}
	}
	// A destructive call a person changed at an earlier attempt sends
	// their arguments again, under the same key: this attempt asks about
	// those, so the decision covers what it sends.
	asked, sends := input, ""
	if g.mode == ApproveEachAttempt {
		if sends = c.Sends(); sends != "" {
			asked = sends
			if canon, err = c.Canonical(sends); err != nil {
				return "", err
			}
		}
	}
	info := CallInfo{
		Tool:           next.Name(),
		CallID:         c.ID(),
		Input:          asked,
		Changed:        sends != "",
		Attempt:        c.Attempts() + 1,
		IdempotencyKey: c.Key(),
		Destructive:    g.mode == ApproveEachAttempt,
		MayHaveApplied: c.MayHaveApplied(),
		RunID:          c.RunID(),
		CanonicalInput: canon,
		CallIDKnown:    c.IDKnown(),
	}
	var decision Verdict
	switch {
	case g.approver == nil:
	case g.stuck.Load() >= maxStuckDecisions:
		// The approver ignores its context and earlier decisions pile up:
		// fail closed without starting one more.
		return "", pauseOf(info, input, "the approver could not decide", errApproverStuck)
	default:
		c.Record(call.Waiting{For: call.WaitingForApproval})
		decision, err = g.decide(ctx, info, c)
	}
	if ctx.Err() != nil {
		return "", ctx.Err() // still waiting for approval, as the record says
	}
	c.Record(call.Waiting{For: call.NotWaiting})
	switch {
	case err != nil:
		call.LogAt(ctx, c, slog.LevelWarn, "toolsafe: the approver could not decide; the call pauses", "attempt", info.Attempt)
		call.DebugLog(ctx, c, "toolsafe: the approver could not decide", "attempt", info.Attempt, "error", call.ErrorText(err))
		return "", pauseOf(info, input, "the approver could not decide", err)
	case decision.Decision == Approved:
		run := cmp.Or(decision.Input, sends) // the person's change, now or at an earlier attempt
		switch {
		case g.mode == ApproveCall:
			g.approve(c, canon, decision.Input)
		case run != "":
			c.SetSends(run) // later attempts send it again, and ask about it
		}
		return runApproved(ctx, next, input, run)
	case decision.Decision == Denied && decision.Message != "":
		return "", &denial{message: decision.Message}
	case decision.Decision == Denied:
		return "", errDenied
	}
	return "", pauseOf(info, input, "", nil)
}

// maxStuckDecisions is how many of a gate's decisions may still run after
// their calls ended (an approver that ignores its context) before the gate
// fails closed: as many as the abandoned attempts a tool may have by
// default (policy.MaxAbandoned).
const maxStuckDecisions = 64

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
func (g *gate) decide(ctx context.Context, info CallInfo, c *call.Call) (Verdict, error) {
	if ctx.Done() == nil {
		return safeDecide(ctx, g.approver, info, c)
	}
	type answer struct {
		d   Verdict
		err error
	}
	done := make(chan answer, 1) // buffered: an abandoned Decide never blocks
	const running, left, finished = 0, 1, 2
	var state atomic.Int32
	go func() {
		d, err := safeDecide(ctx, g.approver, info, c)
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
		return Verdict{}, ctx.Err()
	}
}

// safeDecide calls a.Verdict when a has it, else a.Decide, turning a panic
// into an error. A verdict that is not Approved carries no input, and one
// that is not Denied no message.
func safeDecide(ctx context.Context, a Approver, info CallInfo, c *call.Call) (v Verdict, err error) {
	defer func() {
		r := recover()
		if r == nil {
			if v.Decision != Approved {
				v.Input = ""
			}
			if v.Decision != Denied {
				v.Message = ""
			}
			return
		}
		call.LogPanic(ctx, c, "approver", r, debug.Stack(), "attempt", info.Attempt)
		v, err = Verdict{}, &call.Panic{Who: "the approver", Value: r}
	}()
	if va, ok := a.(VerdictApprover); ok {
		return va.Verdict(ctx, info)
	}
	d, err := a.Decide(ctx, info)
	return Verdict{Decision: d}, err
}

// pauseOf builds the *Required for info, an attempt of a call of the
// model's input: when info asks about a person's change of it
// (info.Changed), the pause names the model's input, which the resumed
// call is made with, and sends the person's.
func pauseOf(info CallInfo, input, reason string, err error) *Required {
	req := pause(info, reason, err)
	if info.Changed {
		req.Input, req.Sends = input, info.Input
	}
	return req
}

// pause builds the *Required for info.
func pause(info CallInfo, reason string, err error) *Required {
	if reason == "" {
		reason = info.Reason()
	}
	return &Required{
		RunID:          info.RunID,
		Tool:           info.Tool,
		CallID:         info.CallID,
		Input:          info.Input,
		Reason:         reason,
		Attempt:        info.Attempt,
		IdempotencyKey: info.IdempotencyKey,
		Err:            err,
	}
}

// approvals is what a gate approved for one call: the canonical inputs,
// each with the input a person approved in its place ("" for itself), kept
// on the call record under the gate's own key (the gate itself), so that
// no other gate can read them as its own.
type approvals []approvedInput

type approvedInput struct{ input, run string }

// approved reports whether g approved input for call c, and the input
// approved in its place, or "".
func (g *gate) approved(c *call.Call, input string) (run string, ok bool) {
	as, _ := c.Value(g).(approvals)
	i := slices.IndexFunc(as, func(a approvedInput) bool { return a.input == input })
	if i < 0 {
		return "", false
	}
	return as[i].run, true
}

// approve records that g approved input for call c, to run as run ("":
// as itself).
func (g *gate) approve(c *call.Call, input, run string) {
	as, _ := c.Value(g).(approvals)
	c.SetValue(g, append(as, approvedInput{input, run}))
}

// runApproved runs the call approved: with input, or, when a person
// changed it before approving (changed is not ""), with changed, its
// result told that a person changed the call and which fields; a failure
// tells it as well (Failure.Changed, from the call's record).
func runApproved(ctx context.Context, next tools.Tool, input, changed string) (string, error) {
	if changed == "" {
		return next.Call(ctx, input)
	}
	// A failure of the changed call tells it too (Failure.Changed): the
	// model must not read it as about its own arguments.
	call.Record(ctx, call.ChangedByPerson{Note: editNote(failedLead, input, changed)})
	out, err := next.Call(ctx, changed)
	if err != nil {
		return out, err
	}
	return editNote(ranLead, input, changed) + "\n" + out, nil
}

// How the note of a person's changes begins (editNote): after the call
// ran, and before its failure.
const (
	ranLead    = "A person changed this call before approving it, and it ran with their arguments"
	failedLead = "A person changed this call before approving it, and what follows is about their arguments, not yours"
)

// maxNoteValue is how much of a changed field's new value the model's
// note shows, in bytes of JSON.
const maxNoteValue = 80

// editNote is the sentence, beginning with lead, that tells the model a
// person changed its call before approving it: which top-level fields, and their new values (the
// person's, as JSON, each cut to 80 bytes), at most 8 of them.
func editNote(lead, input, changed string) string {
	fields := ChangedFields(input, changed)
	var now map[string]json.RawMessage
	_ = json.Unmarshal([]byte(changed), &now)
	var b strings.Builder
	b.WriteString(lead)
	for i, f := range fields {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more fields", len(fields)-i)
			break
		}
		sep := "; "
		if i > 0 {
			sep = ", "
		}
		v, ok := now[f]
		if !ok {
			fmt.Fprintf(&b, "%s%s removed", sep, strconv.Quote(f))
			continue
		}
		val := string(v)
		if len(val) > maxNoteValue {
			val = strings.ToValidUTF8(val[:maxNoteValue], "") + "…"
		}
		fmt.Fprintf(&b, "%s%s is now %s", sep, strconv.Quote(f), val)
	}
	b.WriteString(". Do not call it again with the original arguments.")
	return b.String()
}

// gatesKey keeps on a call the gates its attempts went through, in the
// order they first asked: a []*gate.
type gatesKey struct{}

// passedBy records on c that its attempts go through g.
func (g *gate) passedBy(c *call.Call) {
	if c == nil {
		return
	}
	gs, _ := c.Value(gatesKey{}).([]*gate)
	if slices.Contains(gs, g) {
		return
	}
	c.SetValue(gatesKey{}, append(slices.Clip(gs), g))
}

// GatesOf returns, outermost first, the approval gates the call in ctx
// went through, as layers that put each in front of another tool, asking
// its approver as it asks (every attempt, for a destructive tool): so a
// fallback placed by hand around a gated tool runs its alternative behind
// the same gates. None when the call met no gate.
func GatesOf(ctx context.Context) []middleware.Middleware {
	gs := gatesIn(ctx)
	out := make([]middleware.Middleware, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.layer)
	}
	return out
}

// inheritedKey carries in a context the gates of the calls it was routed
// from (see InheritGates): a []*gate.
type inheritedKey struct{}

// gatesIn is the gates of the call in ctx and those ctx inherited, each
// once, outermost first.
func gatesIn(ctx context.Context) []*gate {
	gs, _ := ctx.Value(inheritedKey{}).([]*gate)
	own, _ := call.From(ctx).Value(gatesKey{}).([]*gate)
	for _, g := range own {
		if !slices.Contains(gs, g) {
			gs = append(slices.Clip(gs), g)
		}
	}
	return gs
}

// InheritGates returns ctx carrying the gates of the call in ctx (and those
// ctx inherited already), for the calls an alternative makes in turn: a
// fallback of the alternative, placed by hand, runs behind them too.
func InheritGates(ctx context.Context) context.Context {
	gs := gatesIn(ctx)
	if len(gs) == 0 {
		return ctx
	}
	return context.WithValue(ctx, inheritedKey{}, gs)
}
