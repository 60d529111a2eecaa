// Package approval is the contract of toolsafe's approval gate: an
// Approver decides whether a call may run (Approved, Denied, or Pending,
// which pauses the agent run with a *Required), and Grants is the
// in-memory Approver for a program that asks a person. A gate never lets a
// call through without its Approver's Approved: a nil Approver, an error or
// a panic all pause the call.
package approval

import (
	"context"
	"fmt"

	"github.com/toolsafe/toolsafe/middleware"
)

// Decision is an Approver's answer for one call. The zero Decision is
// Pending, so an Approver that forgets to decide never lets a call through.
type Decision int

const (
	// Pending means nobody has decided yet: the call pauses with
	// *Required and the agent run stops until it is resumed.
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
	// Input is the input the attempt sends: the call's, as the model gave
	// it, or, at a later attempt of a destructive call (ApproveEachAttempt)
	// whose arguments a person changed at an earlier attempt, the arguments
	// they approved, which it sends again under the same idempotency key
	// (then Changed is true): a decision covers what the attempt sends.
	Input string
	// Changed reports whether Input is a person's change of the model's
	// arguments, approved at an earlier attempt of the call.
	Changed bool
	// Attempt is the number of the attempt about to run: 1 for the first,
	// 2 for the first retry. Only a destructive tool is asked again after 1.
	Attempt int
	// IdempotencyKey is the call's key, the same for every attempt.
	IdempotencyKey string
	// Destructive reports whether every attempt needs its own approval.
	Destructive bool
	// MayHaveApplied reports whether an earlier attempt of this call may
	// already have been applied upstream: approving sends it again, with
	// the same idempotency key.
	MayHaveApplied bool
	// RunID is the agent run the call is part of (package run), or "".
	RunID string
	// CanonicalInput is Input in canonical form (canonical.JSON), as the
	// gate matched it; Grants keys its decisions by it. An Approver that
	// passes on a CallInfo with another Input must clear it.
	CanonicalInput string
	// CallIDKnown reports whether CallID is the model's or the host's
	// (toolsafe.WithCallIDs, an adapter's), not one toolsafe made up:
	// outside a run, a request is then bound to it (see RequestKey).
	CallIDKnown bool
}

// Reason says, for the person asked, why call needs approval now: that
// nothing was granted for its input, or that a retry of a destructive
// action needs its own approval (and whether the earlier attempt may have
// been applied). It is the gate's Required.Reason for call.
func (c CallInfo) Reason() string {
	switch {
	case c.Attempt > 1 && c.Changed:
		return fmt.Sprintf("attempt %d of a destructive action needs its own approval; a person changed its arguments at an earlier attempt, which may have been applied, and approving sends their arguments (shown here) again with the same idempotency key", c.Attempt)
	case c.Attempt > 1 && c.MayHaveApplied:
		return fmt.Sprintf("attempt %d of a destructive action needs its own approval; the previous attempt may have been applied, and approving sends it again with the same idempotency key", c.Attempt)
	case c.Attempt > 1:
		return fmt.Sprintf("attempt %d of a destructive action needs its own approval", c.Attempt)
	}
	return "no approval has been granted for this input"
}

// RequestKey returns what, beside the tool and its canonical input, names the
// request of c: its run ("run " and the run ID); outside a run, its call
// ID when known ("call " and the ID), else nothing more ("call": the calls
// outside a run whose IDs toolsafe made up are one request per tool and
// input). Two calls with the same tool, input and RequestKey are one
// request; an answer given for it is used by no call with another, except
// that a call outside a run whose ID is not known also uses an answer given
// for its ID (a call run.Resume continued takes the paused call's ID; see
// AnsweredAs). Stores key their requests by it.
func (c CallInfo) RequestKey() string {
	switch {
	case c.RunID != "":
		return "run " + c.RunID
	case c.CallIDKnown:
		return "call " + c.CallID
	}
	return "call"
}

// AnsweredAs returns the RequestKey values whose answers c may use, its
// own first: a call outside a run whose ID is not known also uses the
// answer given for a request with its ID.
func (c CallInfo) AnsweredAs() []string {
	if c.RunID == "" && !c.CallIDKnown && c.CallID != "" {
		return []string{"call", "call " + c.CallID}
	}
	return []string{c.RequestKey()}
}

// Approver decides whether a call may run. toolsafe's approval gate asks it
// before an attempt begins: once per call, or before every attempt for a
// destructive tool (toolsafe.WithDestructive).
// Decide must be safe for concurrent use. An error means it could not
// decide: the gate fails closed and the call pauses (*Required with
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

// Required is returned, as an error, by a call that needs a human's
// approval first. It is not a failure: it is never retried, never routed to
// a fallback, and langchaingo's executor returns it from the run, where
// errors.As finds it. Resume the run once the approval is granted (see
// package run's Resume, which keeps the paused call's idempotency key), in
// this process or another: MarshalJSON gives it a wire form.
type Required struct {
	// Tool is the tool waiting; CallID the paused call's ID; Input its
	// input, to which a grant is bound (see Grants; inputs that are the same
	// JSON match whatever their key order or spacing).
	Tool, CallID, Input string
	// Sends is, when a person changed the call's arguments at an earlier
	// attempt, the arguments its paused attempt sends in place of Input,
	// and to which a grant for it is bound; "" otherwise. run.Resume carries
	// it to the resumed call, which the model calls with Input.
	Sends string
	// Reason says, for the person asked, why approval is needed now, e.g.
	// that a retry of a destructive action needs its own approval.
	Reason string
	// Attempt is the number of the attempt that waits: 1 for the first,
	// more when a retry of a destructive tool needs a fresh approval.
	Attempt int
	// IdempotencyKey is the paused call's key; Resume carries it over to the
	// resumed call.
	IdempotencyKey string
	// RunID is the ID of the agent run the call paused in (package run), or
	// "" outside a scoped run. run.Resume continues that run.
	RunID string
	// Err is the Approver's error when it could not decide (the gate fails
	// closed and pauses); nil otherwise. Its text is for the program and
	// logs, never for the model; read from JSON, it is a *RemoteError.
	Err error
}

// Unwrap returns Err.
func (e *Required) Unwrap() error { return e.Err }

// Error says which tool waits for approval and why.
func (e *Required) Error() string {
	msg := "toolsafe: " + e.Tool + " needs approval"
	if e.CallID != "" {
		msg += " (call " + e.CallID + ")"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Kind returns middleware.KindApprovalRequired: a pause is never retried,
// counted by a circuit breaker or routed to a fallback.
func (e *Required) Kind() middleware.Kind { return middleware.KindApprovalRequired }
