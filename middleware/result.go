package middleware

import (
	"time"
)

// Result is the structured outcome of one logical call: what toolsafe's
// Tool.Run returns.
type Result struct {
	// Tool is the tool's name; CallID the call's ID (the model's tool-call ID
	// when known).
	Tool, CallID string
	// Output is the tool's answer on success, "" on failure.
	Output string
	// Attempts is the number of attempts made on the primary tool; 1 means
	// no retry, 0 that no attempt was made (invalid input, open circuit).
	Attempts int
	// Delays are the delays between attempts (the backoff, or a longer
	// Retry-After), in order: Delays[i] came before attempt i+2. When a
	// retry was refused after its delay (by a rate limiter of WithPolicies,
	// an open breaker, a full bulkhead), the delay that came before the
	// refusal is the last, so Delays can be one longer than Attempts-1.
	Delays []time.Duration
	// Elapsed is the time the whole call took, delays included.
	Elapsed time.Duration
	// Fallback is the name of the alternative tool the call was routed to
	// after the primary failed, or "". When it answered, Failure is nil and
	// Output is its answer; when it failed too, Failure is the primary's and
	// Failure.FallbackFailure the alternative's.
	Fallback string
	// Primary is how the primary tool failed when the call was routed to
	// Fallback: why it fell back, whether the alternative answered or not.
	// nil when there was no fallback.
	Primary *Failure
	// Abandoned is the number of attempts given up by the attempt timeout
	// while the tool was still running and ignoring its context (it
	// finishes in the background).
	Abandoned int
	// Failure is how the call failed; nil on success.
	Failure *Failure
	// Replayed reports that the call was answered without being made
	// itself (see run.With): from the run ledger, because the same call of
	// the same run had answered before a pause, or another run resumed from
	// the same pause answered it first; or by an identical call of the run
	// in flight when it was made, whose outcome (answer, failure or pause)
	// it shares. Attempts counts this call's own attempts: 0, unless it
	// lost the race of two resumed runs.
	Replayed bool
}

// Kind is the kind of the call's failure, or "" on success.
func (r Result) Kind() Kind {
	if r.Failure == nil {
		return ""
	}
	return r.Failure.Kind
}

// Status is "ok" on success, "paused" when the call waits for approval, and
// "error" otherwise.
func (r Result) Status() string {
	switch {
	case r.Failure == nil:
		return "ok"
	case r.Failure.Kind == KindApprovalRequired:
		return "paused"
	default:
		return "error"
	}
}

// Observation is what the model sees: the output on success, the failure's
// message otherwise, and "" for a pause or a cancellation (those are
// returned as errors, not shown to the model). An answer from a fallback
// starts with a note that says so, e.g. "(lookup_ticket could not answer,
// so its fallback tool search_tickets did; this answer may be less fresh or
// less complete) ...".
func (r Result) Observation() string {
	if r.Failure == nil {
		if r.Fallback != "" {
			return "(" + r.Tool + " could not answer, so its fallback tool " + r.Fallback +
				" did; this answer may be less fresh or less complete) " + r.Output
		}
		return r.Output
	}
	switch r.Failure.Kind {
	case KindApprovalRequired, KindCanceled:
		return ""
	}
	return r.Failure.Error()
}
