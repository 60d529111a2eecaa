// Package policy turns failsafe-go's policies into policies with tool
// semantics: a Backoff with an exact, testable formula; a Retry that retries
// only what is transient (middleware.Classify), waits what Retry-After asks
// (RFC 9110 §10.2.3), and never schedules a retry that could not start before
// the call's deadline.
//
// Middleware runs each call of a tool through one failsafe-go executor built
// once, when the tool is wrapped: the retry policy first, then the policies
// given to it (a circuit breaker, a bulkhead), then the rest of the chain.
package policy
