package temporaltools

import (
	"context"
	"sync"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
)

// attempt is what one activity attempt knows of its call beyond the
// input: the workflow's call ID, the Temporal attempt, the attempts made
// by earlier activities of the call, and the person's decision the
// workflow waited for, if any.
type attempt struct {
	callID   string
	temporal int // activity.Info.Attempt, from 1
	prior    int
	decision *decision

	mu    sync.Mutex
	used  bool               // the decision decided a gate already
	asked *approval.CallInfo // what Decisions answered Pending for
}

type attemptKey struct{}

func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

func attemptOf(ctx context.Context) *attempt {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// callIDOf is the workflow's call ID of the activity's call.
func callIDOf(ctx context.Context) string {
	if a := attemptOf(ctx); a != nil {
		return a.callID
	}
	return ""
}

// Decisions returns the Approver of toolsafe.WithApproval for a tool run
// as an activity (see New): a call that continues after the workflow
// waited for a person's decision (an approvals inbox over Store, or the
// update DecideUpdate) is Approved or Denied as they decided, when the
// decision was given for this very call: the same tool, canonical input,
// run and call ID. It decides one gate once; for a destructive tool
// (toolsafe.WithDestructive) it decides only the first attempt of the
// activity that continues the call, so a retry by Temporal waits for a
// decision of its own. Any other call is asked of next; nil next, or
// Pending from it, pauses the call, and the workflow waits for a person.
// Safe for concurrent use when next is.
func Decisions(next approval.Approver) approval.Approver {
	return approval.ApproverFunc(func(ctx context.Context, call approval.CallInfo) (approval.Decision, error) {
		a := attemptOf(ctx)
		if a != nil {
			call = a.shown(call)
			if d, ok := a.take(call); ok {
				return d, nil
			}
		}
		if next != nil {
			d, err := next.Decide(ctx, call)
			if err != nil || d != approval.Pending {
				return d, err
			}
		}
		if a != nil {
			a.mu.Lock()
			a.asked = &call
			a.mu.Unlock()
		}
		return approval.Pending, nil
	})
}

// shown is call as the person is to see it: its attempt counted over every
// activity attempt of the call, and, past the first, the possibility that
// an earlier one was applied (the workflow does not know how each ended).
func (a *attempt) shown(call approval.CallInfo) approval.CallInfo {
	call.Attempt += a.prior + a.temporal - 1
	if call.Attempt > 1 {
		call.MayHaveApplied = true
	}
	if call.CanonicalInput == "" {
		if canon, err := canonical.JSON(call.Input); err == nil {
			call.CanonicalInput = canon
		}
	}
	return call
}

// take returns the decision for call and true when the workflow's
// decision was given for it and has not decided a gate yet.
func (a *attempt) take(call approval.CallInfo) (approval.Decision, bool) {
	d := a.decision
	if d == nil || d.Tool != call.Tool || d.CallID != call.CallID || d.RunID != call.RunID ||
		d.CanonicalInput == "" || d.CanonicalInput != call.CanonicalInput {
		return approval.Pending, false
	}
	if call.Destructive && a.temporal != 1 {
		return approval.Pending, false
	}
	if d.Decision != approval.Approved && d.Decision != approval.Denied {
		return approval.Pending, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used {
		return approval.Pending, false
	}
	a.used = true
	return d.Decision, true
}

// pauseCall is what Decisions answered Pending for, or nil.
func (a *attempt) pauseCall() *approval.CallInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}
