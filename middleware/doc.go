// Package middleware is what a tool author uses with toolsafe: Func makes a
// tools.Tool from a function, Middleware and Chain compose layers around one
// (the first is outermost, as in go-kit's endpoint.Chain), and the failure
// taxonomy says who can act on a failure.
//
// Every failure that ends a call is a *Failure with a Kind. Classify looks
// at types only (errors.As, errors.Is), never at message text, through any
// depth of wrapping: a foreign error is transient (retried, then
// tool-failed); Transient and RetryAfter mark one so (RFC 9110 §10.2.3
// Retry-After); NewToolError is semantic (tool-error, never retried, its
// message reaches the model verbatim); Permanent is neither the model's to
// fix nor worth retrying. Failure.Error is the model-facing message, built
// from the Kind, the tool and the counts, never from a foreign error's
// text, which stays in Failure.Cause for DEBUG logs.
//
// A tool with side effects sends IdempotencyKey(ctx) upstream (the
// Idempotency-Key HTTP header), the same for every attempt of a call.
// DoHTTP and FromHTTPResponse turn an HTTP exchange into a classified
// answer.
package middleware
