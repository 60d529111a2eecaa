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
// Each logical call carries a *Call in its context: the tool name, the call
// ID, the attempt number and an idempotency key that is the same for every
// attempt of the call (see IdempotencyKey). Layers record attempts, waits and
// the final failure in it; toolsafe.Tool.Run turns it into a Result.
package middleware
