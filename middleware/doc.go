// Package middleware is the core of toolsafe: the Middleware type that wraps a
// langchaingo tools.Tool, the record of one logical call carried in the
// context, the failure taxonomy, the model-facing messages, panic recovery and
// the hard attempt timeout.
//
// # Middleware
//
// A Middleware takes a tools.Tool and returns one that does more around it.
// Chain composes them; the first is outermost, as in go-kit's endpoint.Chain.
//
// # Failures
//
// Every failure that ends a call is a *Failure with a Kind (see the Kind
// constants). Classification looks at types only (errors.As, errors.Is), never
// at message text, and sees through any depth of wrapping:
//
//   - a foreign error (a *net.OpError, io.ErrUnexpectedEOF, syscall.ECONNRESET,
//     a *url.Error, ...) is transient: retried, then KindFailed;
//   - Transient(err) and RetryAfter(err, d) mark an error as transient, the
//     latter with a minimum wait (RFC 9110 §10.2.3 Retry-After);
//   - NewToolError is semantic (not found, out of range): KindToolError, never
//     retried, its message reaches the model verbatim;
//   - *ApprovalRequired pauses the run; it is returned as an error, never
//     retried, never routed to a fallback.
//
// The text of a foreign error never reaches the model: Failure.Error() is
// built from the Kind, the tool name, the counts and a short reason derived
// from the error's type. The raw text is kept in Failure.Cause and logged at
// DEBUG with log/slog.
//
// # The call record
//
// Each logical call carries a *Call in its context (Begin starts it): the
// tool name, the call ID, the attempt number and an idempotency key that is
// the same for every attempt of the call (see IdempotencyKey). Layers record
// what they see as Events (Record): a retry scheduled, retries stopped, the
// deadline passed, a wait for an approver or a free slot, an attempt
// abandoned, a breaker's state change, a fallback taken. Observers learn
// them (Observe), outside every lock. Surface is the one place that builds
// the call's *Failure, from the error the layers returned and the facts they
// recorded (FailureOf); toolsafe.Tool.Run returns it in the Result.
//
// # Time limits and who ended a context
//
// The call's deadline (Deadline) and each attempt's timeout (AttemptTimeout)
// end their contexts with a cause that names them, so every layer can tell
// the dependency taking too long from the caller giving up (HowEnded): the
// former counts against a circuit breaker and is a tool-timeout; the latter
// is nobody's fault and is canceled.
package middleware
