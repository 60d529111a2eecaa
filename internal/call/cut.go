package call

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/toolsafe/toolsafe/internal/callkey"
)

// CutText names what cut the call short, for its log lines: the attempt
// timeout, the call's deadline or the caller's (see AttemptCutText), or ""
// when no limit did. ctx is the context of the layer that logs, err what
// the layers inside it returned. The call's deadline, which ends a context
// inside that layer, is read from the call's record.
func (c *Call) CutText(ctx context.Context, err error) string {
	if c != nil && HowEnded(ctx) != ByCaller {
		if d := c.facts().deadline; d > 0 {
			return LimitText(ByDeadline, d)
		}
	}
	return AttemptCutText(ctx, err)
}

// AttemptCutText names what cut short an attempt that returned err, its
// context being ctx (the attempt's own, or one outside it): "the attempt
// timeout (2s) passed", "the call's deadline (10s) passed", "the caller's
// deadline passed" or "the caller canceled"; "" when nothing did (ctx has
// not ended and err is no attempt timeout). It reads the context's cause,
// never the error's text, so a tool's net.Error that says "timeout"
// because its context ended is named for the limit that ended it.
func AttemptCutText(ctx context.Context, err error) string {
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

// AttemptTimeout is an attempt whose own time limit passed.
type AttemptTimeout struct {
	Limit time.Duration
	Err   error // what the tool returned, if it returned
}

func (e *AttemptTimeout) Error() string {
	msg := fmt.Sprintf("toolsafe: the attempt did not answer within %v", e.Limit)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *AttemptTimeout) Unwrap() error { return e.Err }

// Is makes an attempt timeout failsafe-go's timeout.ErrExceeded too.
func (e *AttemptTimeout) Is(target error) bool { return target == timeout.ErrExceeded }

// Ended says how a context ended.
type Ended int

const (
	// NotEnded: the context has not ended.
	NotEnded Ended = iota
	// ByCaller: the caller canceled the context or its own deadline
	// passed. It is nobody's fault: a circuit breaker counts it neither
	// way, and no span turns red for it.
	ByCaller
	// ByDeadline: the call's own deadline (toolsafe.WithDeadline) passed:
	// the dependency took too long.
	ByDeadline
	// ByAttemptTimeout: the attempt's own timeout (toolsafe.WithTimeout)
	// passed: the dependency took too long.
	ByAttemptTimeout
)

// LimitCause is the cause of a context that one of toolsafe's own time
// limits ended: the call's deadline or an attempt's timeout.
type LimitCause struct {
	Ended Ended
	Limit time.Duration
	Call  any // the call record whose limit it is (Call.Self)
}

func (c *LimitCause) Error() string {
	if c.Ended == ByAttemptTimeout {
		return fmt.Sprintf("toolsafe: attempt timeout %v passed", c.Limit)
	}
	return fmt.Sprintf("toolsafe: the call's deadline %v passed", c.Limit)
}

// Is makes the cause context.DeadlineExceeded too.
func (c *LimitCause) Is(target error) bool { return target == context.DeadlineExceeded }

// HowEnded tells whether ctx has ended and, if it has, whether one of the
// time limits of the call in ctx ended it (ByDeadline, ByAttemptTimeout) or
// its caller did (ByCaller). It reads context.Cause, never guesses. For a
// toolsafe call made inside another one's attempt, the outer call's limits
// are the caller's.
func HowEnded(ctx context.Context) Ended {
	if ctx.Err() == nil {
		return NotEnded
	}
	if lc, ok := errors.AsType[*LimitCause](context.Cause(ctx)); ok && lc.Call == ctx.Value(callkey.Call{}) {
		return lc.Ended
	}
	return ByCaller
}
