// Package testkit is what toolsafe's own tests share, in one place: the
// demo's billing and refund tools wrapped by toolsafe on a real scripted
// upstream (toolsafetest.Upstream) that is closed when the test ends
// (Billing, Refunds); stand-in tools that block, count, refuse or ignore
// their context (Stuck, Counting, Done, Refund, Refusing, Ignoring), an
// approver that answers one decision and keeps what it was asked
// (Approver) and an upstream handler that holds requests until released
// (Hold); a circuit breaker brought to half-open (HalfOpen), the exact
// backoff whose waits the tests assert (Backoff) and a logger for tests
// whose failures log on purpose (Quiet); an in-memory tracer and meter
// provider with a Hook on them (NewRecorder) and span and attribute
// lookups; and readers of a call's outcome: its failure's kind, its pause
// for approval, or that it returned at all within a bound (Kind, Paused,
// Within). Each stand-in does one thing, so a test shows exactly the
// behaviour it needs.
//
// Only tests import it; users have their kit in package toolsafetest.
package testkit
