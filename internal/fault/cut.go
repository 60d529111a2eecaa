package fault

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CutText names what cut short an attempt that returned err, its context
// being ctx (the attempt's own, or one outside it): "the attempt timeout
// (2s) passed", "the call's deadline (10s) passed", "the caller's deadline
// passed" or "the caller canceled"; "" when nothing did (ctx has not ended
// and err is no attempt timeout). It reads the context's cause, never the
// error's text, so a tool's net.Error that says "timeout" because its
// context ended is named for the limit that ended it.
func CutText(ctx context.Context, err error) string {
	var at *AttemptTimeout
	if errors.As(err, &at) {
		return LimitText(ByAttemptTimeout, at.Limit)
	}
	switch how := HowEnded(ctx); how {
	case NotEnded:
		return ""
	case ByCaller:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "the caller's deadline passed"
		}
		return "the caller canceled"
	default:
		var lc *LimitCause
		errors.As(context.Cause(ctx), &lc)
		var limit time.Duration
		if lc != nil {
			limit = lc.Limit
		}
		return LimitText(how, limit)
	}
}

// LimitText names one of toolsafe's own limits that passed: "the attempt
// timeout (2s) passed" or "the call's deadline (10s) passed"; a limit of 0
// is left out.
func LimitText(how Ended, limit time.Duration) string {
	what := "the call's deadline"
	if how == ByAttemptTimeout {
		what = "the attempt timeout"
	}
	if limit > 0 {
		return fmt.Sprintf("%s (%v) passed", what, limit)
	}
	return what + " passed"
}
