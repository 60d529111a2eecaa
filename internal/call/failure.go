package call

import (
	"context"
	"errors"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// FailureOf returns the *Failure that err would end the call in ctx with:
// the one Surface builds, from err's kind (Classify) and the facts the
// layers recorded on the call (attempts, waits, a side effect that may have
// landed, a deadline that passed, why retries stopped, a fallback that
// failed). A layer that must decide on the outcome of the layers inside it,
// such as a fallback, asks it; it records nothing. It returns nil for a nil
// err; when ctx carries no call it uses err alone.
func FailureOf(ctx context.Context, err error) *middleware.Failure {
	if err == nil {
		return nil
	}
	c := From(ctx)
	var fs facts
	tool := ""
	if c != nil {
		fs, tool = c.facts(), c.tool
	}
	return buildFailure(ctx, fs, tool, err)
}

// buildFailure is the one place a *Failure is made from what happened.
func buildFailure(ctx context.Context, fs facts, tool string, err error) *middleware.Failure {
	f := &middleware.Failure{
		Tool:            tool,
		Attempts:        fs.attempts,
		Elapsed:         fs.elapsed,
		SideEffect:      fs.sideEffect,
		Cause:           err,
		FallbackFailure: fs.altFailure,
		FallbackSkipped: fs.altSkipped,
		Changed:         fs.changed,
	}
	if k, _ := middleware.Classify(err); k == middleware.KindApprovalRequired {
		f.Kind = middleware.KindApprovalRequired
		return f
	}
	if ctx.Err() != nil && HowEnded(ctx) == ByCaller {
		f.Kind, f.Cause = middleware.KindCanceled, ctx.Err()
		return f
	}
	kind, retryable := middleware.Classify(err)
	f.Kind, f.Retryable = kind, retryable
	var own *middleware.Failure
	if errors.As(err, &own) {
		// A failure of another toolsafe call, returned by the tool.
		f.Wait, f.Timeout, f.Dependency, f.WaitingFor = own.Wait, own.Timeout, own.Dependency, own.WaitingFor
		if own.SideEffect == middleware.SideEffectUnknown {
			f.SideEffect = middleware.SideEffectUnknown
		}
	}
	if rf, ok := errors.AsType[refused](err); ok {
		f.Dependency, f.Wait = rf.Refused()
	}
	var at *AttemptTimeout
	if errors.As(err, &at) {
		f.Timeout = at.Limit
	}
	if fs.stopped {
		f.Retryable = false
		if fs.stopWait > 0 {
			f.Wait = fs.stopWait
		}
	}
	unsettled := (kind == middleware.KindFailed && retryable) || kind == middleware.KindTimeout
	if fs.deadline > 0 && unsettled {
		// The call's own deadline passed: whatever the last attempt said, the
		// call ran out of time. An answer that settles the call (a pause, a
		// semantic error, a panic) keeps its kind.
		f.Kind, f.Retryable, f.Timeout, f.Wait = middleware.KindTimeout, false, fs.deadline, 0
		f.WaitingFor = fs.waiting
		if fs.waiting == WaitingForSlot {
			f.Dependency = fs.waitingDep
		}
	}
	return f
}

// refused is an attempt refused before it reached the tool by a layer that
// guards a dependency (package policy's breaker and bulkhead): it tells
// the dependency's name and, for an open circuit, the time left before it
// lets a probe through, which the model's message names.
type refused interface {
	error
	Refused() (dependency string, wait time.Duration)
}
