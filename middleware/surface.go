package middleware

import (
	"context"
	"errors"
	"time"

	"github.com/tmc/langchaingo/tools"
)

// Surface turns the failure of a call into what the model sees, as
// langchaingo expects: the model-facing message as the output with a nil
// error (langchaingo's executor aborts the whole run on a tool error). Two
// errors stay errors: an *ApprovalRequired, so the run pauses, and the
// caller's cancellation, returned as ctx.Err(). The failure is recorded in the
// call (see Call.Failure) and its raw cause logged at DEBUG.
//
// Surface starts a call record if ctx carries none.
func Surface() Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			ctx, call := ensureCall(ctx, next.Name())
			out, err := next.Call(ctx, input)
			if err == nil {
				return out, nil
			}
			f := ToFailure(ctx, call, err)
			call.SetFailure(f)
			call.Logger().DebugContext(ctx, "toolsafe: tool call failed",
				"tool", call.Tool(), "call_id", call.ID(), "kind", string(f.Kind),
				"attempts", f.Attempts, "error", err) // formatted only when DEBUG is on
			switch f.Kind {
			case KindApprovalRequired:
				var ar *ApprovalRequired
				errors.As(err, &ar)
				return "", ar
			case KindCanceled:
				return "", ctx.Err()
			}
			return f.Error(), nil
		})
	}
}

// ToFailure returns the *Failure that err ends call with: err's own *Failure
// if it has one (copied, with Tool, Attempts and Elapsed filled in from call
// when unset), else a new one from Classify. When ctx has ended the kind is
// KindCanceled. Approval pauses become KindApprovalRequired.
func ToFailure(ctx context.Context, call *Call, err error) *Failure {
	var f Failure
	var ar *ApprovalRequired
	switch {
	case errors.As(err, &ar):
		f = Failure{Kind: KindApprovalRequired, Cause: ar}
	case ctx.Err() != nil:
		f = Failure{Kind: KindCanceled, Cause: ctx.Err()}
	default:
		var own *Failure
		if errors.As(err, &own) {
			f = *own
		} else {
			kind, retryable := Classify(err)
			f = Failure{Kind: kind, Retryable: retryable, Cause: err}
		}
	}
	if call != nil {
		if f.Tool == "" {
			f.Tool = call.Tool()
		}
		if f.Attempts == 0 {
			f.Attempts = call.Attempts()
		}
		if f.Elapsed == 0 {
			f.Elapsed = time.Since(call.Start())
		}
		if call.SideEffect() == SideEffectUnknown {
			f.SideEffect = SideEffectUnknown
		}
	}
	return &f
}
