package middleware

import (
	"errors"
	"net"
	"net/http"
	"syscall"
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
	if k, _ := Classify(err); k == KindApprovalRequired {
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
