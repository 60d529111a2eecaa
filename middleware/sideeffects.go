package middleware

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"

	"github.com/tmc/langchaingo/tools"
)

// SideEffects says whether a tool changes something upstream and, if it
// does, whether a retried attempt is safe. The zero value, NoSideEffects,
// is the right one for a tool that only reads.
type SideEffects int

const (
	// NoSideEffects marks a tool that only reads: any transient failure
	// may be retried. The default.
	NoSideEffects SideEffects = iota
	// SideEffectsWithKey marks a tool that changes something upstream and
	// sends IdempotencyKey(ctx) with every attempt (the Idempotency-Key
	// HTTP header), so the upstream applies the attempts of one call once.
	// It is retried like a tool that only reads; a failure whose outcome is
	// unknown is still reported with SideEffectUnknown, because calling the
	// tool again is a new call with a new key.
	SideEffectsWithKey
	// SideEffectsWithoutKey marks a tool that changes something upstream
	// and cannot tell the upstream that two attempts are one action. It is
	// retried only after a failure that proves the action was not applied
	// (see MayHaveApplied); any other failure ends the call at once with
	// SideEffectUnknown, and the model is told to check before calling
	// again.
	SideEffectsWithoutKey
)

// String returns "none", "with-key" or "without-key".
func (s SideEffects) String() string {
	switch s {
	case SideEffectsWithKey:
		return "with-key"
	case SideEffectsWithoutKey:
		return "without-key"
	}
	return "none"
}

// GuardSideEffects applies the side-effect rule to each attempt of a tool
// with side effects: an attempt that may have been applied — it reached
// the tool and then failed in a way that does not prove otherwise (see
// MayHaveApplied), or was cut short by the attempt timeout, the call's
// deadline or the caller — marks the call SideEffectUnknown, so its
// Failure and the model's message say "may have been applied; check before
// calling again" whichever layer ended it, and a fallback never runs after
// it. For SideEffectsWithoutKey it also ends the call, not retried: calling
// again would be a second action. Place it inside the retry and outside
// the approval gate, as toolsafe does. For NoSideEffects it returns the
// tool as is.
func GuardSideEffects(s SideEffects) Middleware {
	return func(next tools.Tool) tools.Tool {
		if s != SideEffectsWithKey && s != SideEffectsWithoutKey {
			return next
		}
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			call := CallFrom(ctx)
			before := call.Attempts()
			out, err := next.Call(ctx, input)
			if err == nil || call.Attempts() == before && call != nil {
				return out, err // it never reached the tool
			}
			if ctx.Err() == nil && !MayHaveApplied(err) {
				return out, err
			}
			call.markSideEffectUnknown()
			if s == SideEffectsWithoutKey && ctx.Err() == nil {
				return "", &finalError{err: err}
			}
			return out, err
		})
	}
}

// MayHaveApplied reports whether the attempt that failed with err may have
// changed something upstream. It answers false only when the error's type
// proves the request was not acted on, and true otherwise:
//
//   - false: nil; a refused connection, a failed dial or name lookup (the
//     request never left); HTTP 408, 425, 429 and 503 and any RetryAfter (the
//     upstream said it did not act); a ToolError (the tool knows the
//     outcome); an approval pause or denial, an open circuit, a full
//     bulkhead, a spent budget, invalid arguments (no attempt was made);
//   - true: an attempt timeout, a panic, a reset or closed connection, an
//     HTTP 500, 502 or 504, and any error it knows nothing about.
//
// Like Classify it looks at types only, through any depth of wrapping.
func MayHaveApplied(err error) bool {
	if err == nil {
		return false
	}
	var ar *ApprovalRequired
	if errors.As(err, &ar) {
		return false
	}
	var f *Failure
	if errors.As(err, &f) {
		if f.SideEffect == SideEffectUnknown {
			return true
		}
		switch f.Kind {
		case KindTimeout, KindPanic:
			return true
		case KindFailed:
			return f.Cause == nil || MayHaveApplied(f.Cause)
		}
		return false
	}
	switch kind, _ := Classify(err); kind {
	case KindTimeout, KindPanic:
		return true
	case KindToolError, KindArgsInvalid, KindCircuitOpen, KindBusy, KindBudget, KindApprovalDenied:
		return false
	}
	var ra *retryAfterError
	var te *ToolError
	var he *HTTPError
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &ra), errors.As(err, &te), errors.As(err, &dns):
		return false
	case errors.As(err, &he):
		switch he.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return false
		}
		return true
	case errors.Is(err, syscall.ECONNREFUSED):
		return false
	case errors.As(err, &op) && op.Op == "dial":
		return false
	}
	return true
}
