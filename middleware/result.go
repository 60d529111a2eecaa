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
	// Delays are the waits before attempts 2..n, in order.
	Delays []time.Duration
	// Elapsed is the time the whole call took, waits included.
	Elapsed time.Duration
	// Fallback is the name of the alternative tool the call was routed to
	// after the primary failed, or "". When it answered, Failure is nil and
	// Output is its answer; when it failed too, Failure is the primary's and
	// Failure.FallbackFailure the alternative's.
	Fallback string
	// Abandoned is the number of attempts given up by the attempt timeout
	// while the tool was still running (it finishes in the background).
	Abandoned int
	// Failure is how the call failed; nil on success.
	Failure *Failure
}

// Result builds the Result of the call from its record and the output of
// the chain.
func (c *Call) Result(output string) Result {
	r := Result{
		Tool:      c.tool,
		CallID:    c.id,
		Attempts:  c.Attempts(),
		Delays:    c.Delays(),
		Elapsed:   time.Since(c.start),
		Fallback:  c.Fallback(),
		Abandoned: c.Abandoned(),
		Failure:   c.Failure(),
	}
	if r.Failure == nil {
		r.Output = output
	}
	return r
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
