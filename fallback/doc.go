// Package fallback routes a call whose primary tool failed for good to a
// declared alternative tool: the layer inside argument validation and outside
// the call's deadline and retries, built on failsafe-go's fallback policy.
//
//	search := toolsafe.Wrap(searchTickets, toolsafe.WithRetry(policy.Retry{MaxRetries: 2}))
//	lookup := toolsafe.Wrap(lookupTicket,
//		toolsafe.WithFallback(fallback.To(search,
//			fallback.WithInput(idToQuery),  // the alternative takes other arguments
//		)),
//	)
//
// # When it runs
//
// The fallback sees the primary's final failure, after its retries. By
// default it runs on tool-failed, tool-timeout, circuit-open and tool-error
// (On changes the list). It never runs on approval-required,
// approval-denied, args-invalid or the caller's cancellation: a pause waits
// for a person, a refusal stands, a bad argument is the model's to fix, and a
// cancelled caller wants nothing more. Nor does it run on a tool-timeout
// that came while the primary's approval gate was still waiting for the
// approver: an approval that did not come in time is no way around it.
//
// # The alternative is a real tool call
//
// Pass a *toolsafe.Tool as the alternative: it is called through its own
// wrapped stack (argument validation, retries, circuit breaker, approval
// gate), as a call of its own with its own record and idempotency key. A
// destructive alternative without a grant therefore pauses the run instead
// of running: a fallback is never a way around an approval.
//
// A plain tools.Tool is never called bare either: it runs once, through
// toolsafe's layers with the primary's attempt timeout, deadline, logger
// and tracing, its panic recovered.
//
// # What the model sees
//
// When the alternative answers, Result.Fallback names it and the
// observation starts with a note that the answer came from the fallback and
// may be less fresh or less complete. When it fails too, the model sees the
// primary's failure followed by the alternative's
// (middleware.Failure.FallbackFailure); the call keeps the primary's kind.
package fallback
