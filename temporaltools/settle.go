package temporaltools

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

// How an activity attempt ends for Temporal, by the call's kind.
type disposition int

const (
	// answered: the result, for the model (statusOK, statusError).
	answered disposition = iota
	// paused: the result, statusPaused; the workflow waits for a person.
	paused
	// retry: a retryable ApplicationError; Temporal's retry policy decides.
	retry
	// final: a non-retryable ApplicationError, its details for the model.
	final
	// canceled: the activity's own cancellation.
	canceled
)

// dispositionOf is the table of how a call's failure f crosses into
// Temporal:
//
//	kind                                               Temporal
//	tool-error, args-invalid, approval-denied,
//	  call-limit (semantic: the model's to act on)    the result, with the message
//	approval-required                                  the result; the workflow waits
//	tool-failed, tool-timeout of a transient cause     retryable, NextRetryDelay from Retry-After
//	circuit-open, tool-busy, budget-exceeded           retryable, NextRetryDelay the breaker's time left
//	tool-panic, tool-failed or tool-timeout that must
//	  not be sent again (Permanent, an attempt of a
//	  tool without idempotency keys that may have
//	  been applied), any other kind                    non-retryable, the message in its details
//	canceled                                           the context's error
func dispositionOf(f *middleware.Failure) disposition {
	switch f.Kind {
	case middleware.KindToolError, middleware.KindArgsInvalid, middleware.KindApprovalDenied, middleware.KindCallLimit:
		return answered
	case middleware.KindApprovalRequired:
		return paused
	case middleware.KindCanceled:
		return canceled
	case middleware.KindCircuitOpen, middleware.KindBusy, middleware.KindBudget:
		return retry
	case middleware.KindFailed, middleware.KindTimeout:
		if f.Cause == nil {
			return final
		}
		if _, transient := middleware.Classify(f.Cause); transient {
			return retry
		}
	}
	return final
}

// settle turns the Result of one activity attempt into what the activity
// returns: the result for an answer, a failure meant for the model and a
// pause; an ApplicationError of type the kind, its message toolsafe's, for
// the failures Temporal retries or records; the context's error for a
// cancellation. No foreign error's text and no cause crosses into
// Temporal's history: the raw truth is in toolsafe's DEBUG log.
func settle(ctx context.Context, a *attempt, l *callLedger, r middleware.Result) (outcome, error) {
	o := outcome{Attempt: a.temporal, ToolAttempts: r.Attempts, ReadOnly: l.onlyReads(), Key: l.key, CallID: r.CallID, Fallback: r.Fallback}
	f := r.Failure
	if f == nil {
		o.Status, o.Output = statusOK, r.Observation()
		return o, nil
	}
	o.Kind, o.Message, o.Reason = f.Kind, f.Error(), middleware.Reason(f.Cause)
	o.Retryable, o.SideEffectUnknown = f.Retryable, f.SideEffect == middleware.SideEffectUnknown
	o.Timeout, o.Wait, o.Dependency, o.WaitingFor = f.Timeout, f.Wait, f.Dependency, f.WaitingFor
	switch dispositionOf(f) {
	case answered:
		o.Status = statusError
		return o, nil
	case paused:
		o.Status, o.Pause = statusPaused, pauseOf(a, l, f)
		o.Message = ""
		return o, nil
	case canceled:
		if err := ctx.Err(); err != nil {
			return outcome{}, err
		}
		return outcome{}, temporal.NewApplicationErrorWithOptions(o.Message, string(f.Kind), temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{o}})
	case retry:
		delay, _ := middleware.RetryAfterOf(f.Cause)
		if delay <= 0 {
			delay = f.Wait
		}
		o.Wait = delay
		return outcome{}, temporal.NewApplicationErrorWithOptions(o.Message, string(f.Kind), temporal.ApplicationErrorOptions{NextRetryDelay: delay, Details: []any{o}})
	}
	return outcome{}, temporal.NewApplicationErrorWithOptions(o.Message, string(f.Kind), temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{o}})
}

// pauseOf is the call that waits, as the person is to see it: as Decisions
// answered Pending for it, or as the gate's pause says (another Approver).
func pauseOf(a *attempt, l *callLedger, f *middleware.Failure) *pause {
	var ar *approval.Required
	errors.As(f, &ar)
	if c := a.pauseCall(); c != nil {
		return &pause{Call: *c, Reason: c.Reason(), Attempt: a.temporal}
	}
	p := &pause{Attempt: a.temporal, Call: a.shown(approval.CallInfo{Tool: l.tool, CallID: a.callID, Attempt: 1})}
	if ar != nil {
		p.Call = a.shown(approval.CallInfo{Tool: ar.Tool, CallID: ar.CallID, Input: ar.Input, Attempt: max(ar.Attempt, 1),
			IdempotencyKey: ar.IdempotencyKey, RunID: ar.RunID})
		p.Reason = ar.Reason
	}
	if p.Call.IdempotencyKey == "" {
		p.Call.IdempotencyKey = l.key
	}
	return p
}
