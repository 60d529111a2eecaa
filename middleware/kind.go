package middleware

// Kind names a class of failure. Its values are stable strings, used as the
// OpenTelemetry error.type attribute, in metrics and in the policies file.
type Kind string

// The kinds of failure. Kinds lists them in this order.
const (
	// KindToolError is a semantic error from the tool (not found, out of
	// range, denied): not retried; the model sees the tool's message.
	KindToolError Kind = "tool-error"
	// KindFailed is a transient failure that outlived its retries, or one
	// marked Permanent.
	KindFailed Kind = "tool-failed"
	// KindTimeout is an attempt, or the whole call, that ran out of time.
	KindTimeout Kind = "tool-timeout"
	// KindArgsInvalid is input that failed argument validation: no attempt
	// was made.
	KindArgsInvalid Kind = "args-invalid"
	// KindCircuitOpen is a call refused by an open circuit breaker.
	KindCircuitOpen Kind = "circuit-open"
	// KindBusy is a call refused by a full bulkhead, a rate limiter, an
	// adaptive limiter or throttler, because earlier attempts at the tool
	// are still stuck, or because the run ledger that must record it first
	// is unavailable (the store's condition: its Cause says so).
	KindBusy Kind = "tool-busy"
	// KindBudget is a retry refused because the retry budget was spent.
	KindBudget Kind = "budget-exceeded"
	// KindPanic is a tool that panicked.
	KindPanic Kind = "tool-panic"
	// KindApprovalRequired is a call paused for a human's approval. It is
	// returned as an error (*approval.Required) so the agent run stops.
	KindApprovalRequired Kind = "approval-required"
	// KindApprovalDenied is a call whose approval was refused.
	KindApprovalDenied Kind = "approval-denied"
	// KindCanceled is a call whose caller's context ended; ctx.Err() is
	// returned as the error.
	KindCanceled Kind = "canceled"
	// KindCallLimit is a call refused by the loop guard (LoopGuard): the
	// run already made the calls its limits allow, or the same call failed
	// already and the model was told not to repeat it. No attempt was made;
	// it is never retried or routed to a fallback.
	KindCallLimit Kind = "call-limit"
)

// Kinds returns every Kind, in the order of the taxonomy: the one list
// that the policies file, the fallback rules and the metrics draw on. It
// returns a fresh slice.
func Kinds() []Kind {
	return []Kind{KindToolError, KindFailed, KindTimeout, KindArgsInvalid, KindCircuitOpen, KindBusy,
		KindBudget, KindPanic, KindApprovalRequired, KindApprovalDenied, KindCanceled, KindCallLimit}
}

// kindError is the sentinel error of one Kind.
type kindError struct{ kind Kind }

func (e *kindError) Error() string { return "toolsafe: " + string(e.kind) }

// sentinels holds the sentinel error of each Kind, made once.
var sentinels = func() map[Kind]error {
	m := make(map[Kind]error, len(Kinds()))
	for _, k := range Kinds() {
		m[k] = &kindError{k}
	}
	return m
}()

// Err returns the sentinel error of k, for errors.Is: a *Failure is its
// Kind's sentinel, so errors.Is(err, KindTimeout.Err()) reports whether err
// is (or wraps) a failure of kind tool-timeout. It is nil for a string that
// is no Kind, and never returned by a call by itself.
func (k Kind) Err() error { return sentinels[k] }

// SideEffect says whether a failed call may have changed something upstream.
type SideEffect int

const (
	// SideEffectNone means no side effect is known to have happened: the
	// tool has none, or no attempt at it can have reached the upstream.
	SideEffectNone SideEffect = iota
	// SideEffectUnknown means an attempt at a side-effecting action ended
	// without an answer: the action may have been applied.
	SideEffectUnknown
)

// String returns "none" or "unknown".
func (s SideEffect) String() string {
	if s == SideEffectUnknown {
		return "unknown"
	}
	return "none"
}
