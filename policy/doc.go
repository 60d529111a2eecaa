// Package policy turns failsafe-go's policies into policies with tool
// semantics: a Backoff with an exact, testable formula; a Retry that retries
// only what is transient (middleware.Classify), waits what Retry-After asks
// (RFC 9110 §10.2.3), and never schedules a retry that could not start before
// the call's deadline.
//
// Middleware runs each call of a tool through one failsafe-go executor built
// once, when the tool is wrapped: the retry policy first, then the policies
// given to it, then the rest of the chain.
//
// # One dependency, many tools
//
// A CircuitBreaker, a Bulkhead and a retry budget (Retry.Budget) belong to a
// dependency, not to a tool: make each once (NewCircuitBreaker, NewBulkhead,
// failsafe-go's budget.NewBuilder) and give it to every tool that calls the
// dependency. toolsafe places the breaker and the bulkhead inside the retry
// and the approval gate, outside the attempt timeout, so every attempt asks
// for a permit, once a person has approved it:
//
//   - the breaker counts only transient failures and timeouts (the attempt
//     timeout's or the call's deadline's) of attempts that reached the tool;
//     a tool-error, an approval pause, a panic or the caller's cancellation
//     counts neither way, and a cancelled half-open probe gives its permit
//     back once its tool has returned. Open, it refuses at once with
//     circuit-open, not retried;
//   - the bulkhead keeps an attempt's permit until the tool really returns,
//     even after the attempt timeout abandoned it; full, it refuses with
//     tool-busy, not retried;
//   - the budget refuses a retry that would make retries more than their
//     share of the attempts in flight: the call ends with budget-exceeded.
//
// Both drive failsafe-go's own state machines (circuitbreaker, bulkhead)
// from a middleware rather than as executor policies, because failsafe-go
// would count an excluded error as a success, a cancellation as a failure,
// and would return a bulkhead permit when the attempt timeout gives up
// rather than when the tool returns.
package policy
