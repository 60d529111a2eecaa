package layer

import (
	"context"
	"errors"
	"log/slog"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// Surface turns the failure of a call into what the model sees, as
// langchaingo expects: the model-facing message as the output with a nil
// error (langchaingo's executor aborts the whole run on a tool error).
// Three errors stay errors, each known by its kind or its mark, not by its
// package: a pause (approval-required: an *approval.Required), so the run
// pauses, the caller's cancellation, returned as ctx.Err(), and an error a
// layer marks as the program's to fix (call.ForProgram: a resumed run that
// its ledger does not hold, run.ErrNotHeld).
//
// It is the one place where a call's *Failure is built: from the error the
// layers inside returned and the facts they recorded (see FailureOf). It
// keeps the Failure in the call record, for Result, and logs at DEBUG the
// raw text of the error, with the tool, call ID, kind, attempts and the trace
// and span IDs. It starts a call record if ctx carries none for this tool.
func Surface() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			ctx, c := call.Ensure(ctx, next.Name(), input)
			out, err := next.Call(ctx, input)
			if err == nil {
				return out, nil
			}
			return surface(ctx, c, err)
		})
	}
}

// surface builds the call's Failure from err and says what the model sees,
// out of line, so that a call that succeeds keeps a small frame.
func surface(ctx context.Context, c *call.Call, err error) (string, error) {
	f := c.Settle(ctx, err)
	if call.Enabled(ctx, c, slog.LevelDebug) {
		call.DebugLog(ctx, c, "toolsafe: tool call failed", "kind", string(f.Kind),
			"attempts", f.Attempts, "side_effect", f.SideEffect.String(), "ended_by", c.CutText(ctx, err),
			"error", call.ErrorText(err))
	}
	switch f.Kind {
	case middleware.KindApprovalRequired:
		if p := call.Pause(err); p != nil {
			return "", p
		}
		return "", err // a pause in another form: still an error, never text
	case middleware.KindCanceled:
		return "", ctx.Err()
	}
	if fp, ok := errors.AsType[*call.ForProgram](err); ok {
		return "", fp.Err
	}
	return f.Error(), nil
}
