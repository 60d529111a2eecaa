package middleware

import (
	"context"
	"fmt"
	"sync"

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
	// Input is the exact input of the call.
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
}

// Approver decides whether a call may run. It is asked by Gate, once per
// call or once per attempt (see GateMode), before the attempt begins.
// Decide must be safe for concurrent use. An error means it could not
// decide: the gate fails closed and the call pauses (*ApprovalRequired with
// Err set), it never runs.
type Approver interface {
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

// Gate is the approval gate (layer 8 of DESIGN.md §2): it asks a before an
// attempt and runs it only when approved. Placed inside the retry, it is
// asked again for every attempt of a destructive tool (ApproveEachAttempt).
//
// The attempt ends with:
//   - *ApprovalRequired when a says Pending or fails (an error: the agent run
//     stops; nothing ran, so it is never retried, counted by a circuit
//     breaker or routed to a fallback);
//   - a *Failure of KindApprovalDenied when a says Denied;
//   - the tool's own outcome when a says Approved.
//
// A nil a pauses every call: a gate can never be bypassed by a missing
// approver. Gate is safe for concurrent use when a is.
func Gate(a Approver, mode GateMode) Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			call := CallFrom(ctx)
			if call == nil {
				call = NewCall(next.Name(), "")
				ctx = WithCall(ctx, call)
			}
			if mode == ApproveCall && call.isApproved() {
				return next.Call(ctx, input)
			}
			info := CallInfo{
				Tool:           next.Name(),
				CallID:         call.ID(),
				Input:          input,
				Attempt:        call.Attempts() + 1,
				IdempotencyKey: call.Key(),
				Destructive:    mode == ApproveEachAttempt,
				MayHaveApplied: call.SideEffect() == SideEffectUnknown,
			}
			decision, err := Pending, error(nil)
			if a != nil {
				decision, err = a.Decide(ctx, info)
			}
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			switch {
			case err != nil:
				return "", pause(info, "the approver could not decide", err)
			case decision == Approved:
				call.setApproved()
				return next.Call(ctx, input)
			case decision == Denied:
				return "", &Failure{Kind: KindApprovalDenied, Tool: next.Name(), Attempts: call.Attempts()}
			}
			return "", pause(info, "", nil)
		})
	}
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
		Tool:           info.Tool,
		CallID:         info.CallID,
		Input:          info.Input,
		Reason:         reason,
		Attempt:        info.Attempt,
		IdempotencyKey: info.IdempotencyKey,
		Err:            err,
	}
}

func (c *Call) isApproved() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.approved
}

func (c *Call) setApproved() {
	c.mu.Lock()
	c.approved = true
	c.mu.Unlock()
}

// resumption is a paused call that the next matching call continues.
type resumption struct {
	tool, input, callID, key string

	mu   sync.Mutex
	used bool
}

type resumeKey struct{}

// Resume returns a context in which the next call of ar.Tool with exactly
// ar.Input continues the paused call: it keeps the paused call's idempotency
// key (and its call ID, unless the model gave the new call one), so an
// action that may already have been applied when the call paused is sent
// again under the same key and applied once. Pass it to the agent run that
// resumes after the approval was granted. Each Resume continues one call;
// other calls in the run are unaffected. Resume(ctx, nil) returns ctx.
func Resume(ctx context.Context, ar *ApprovalRequired) context.Context {
	if ar == nil {
		return ctx
	}
	r := &resumption{tool: ar.Tool, input: ar.Input, callID: ar.CallID, key: ar.IdempotencyKey}
	parent, _ := ctx.Value(resumeKey{}).([]*resumption)
	return context.WithValue(ctx, resumeKey{}, append(parent[:len(parent):len(parent)], r))
}

// ResumeFrom makes c continue a paused call when ctx resumes one (see
// Resume) of c's tool with exactly input: c takes over its idempotency key,
// and its call ID unless c's ID is the model's. It reports whether it did.
// Call it right after NewCall, before c is shared: it is not safe for
// concurrent use with c's other methods.
func (c *Call) ResumeFrom(ctx context.Context, input string) bool {
	rs, _ := ctx.Value(resumeKey{}).([]*resumption)
	for _, r := range rs {
		if r.tool != c.tool || r.input != input {
			continue
		}
		r.mu.Lock()
		used := r.used
		r.used = true
		r.mu.Unlock()
		if used {
			continue
		}
		if r.key != "" {
			c.key = r.key
		}
		if r.callID != "" && !c.IDKnown() {
			c.id = r.callID
		}
		return true
	}
	return false
}
