package middleware

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ToolError is a semantic failure reported by a tool: the input names
// something that does not exist, a value is out of range, the action is not
// allowed. Its message is meant for the model and reaches it verbatim, so
// write it as advice the model can act on. It is not retried unless made with
// RetryableToolError.
type ToolError struct {
	msg       string
	retryable bool
	upstream  bool // msg is an upstream's own text: the model's, not a span's
	cause     error
	status    int // the HTTP status, when FromHTTPResponse made it
}

// NewToolError returns a semantic, non-retryable error whose message (made
// with fmt.Sprintf) the model sees verbatim: kind tool-error.
func NewToolError(format string, args ...any) *ToolError {
	return &ToolError{msg: fmt.Sprintf(format, args...)}
}

// RetryableToolError returns a ToolError whose Retryable is true: "try
// later". It is retried like a transient error and its message (made with
// fmt.Sprintf) is shown to the model if the retries run out.
func RetryableToolError(format string, args ...any) *ToolError {
	return &ToolError{msg: fmt.Sprintf(format, args...), retryable: true}
}

// UpstreamToolError returns a semantic, non-retryable error (kind
// tool-error) whose message is text an upstream wrote, such as an MCP
// server's isError result: the model sees it verbatim, but it may quote the
// arguments or hold personal data, so spans and INFO logs get only its size
// (see Reason and Failure.MessageWithoutArguments); DEBUG logs get the text.
func UpstreamToolError(text string) *ToolError {
	return &ToolError{msg: text, upstream: true}
}

// WithCause returns a copy of e that keeps err as its cause, for logs and
// errors.Is; the cause's text never reaches the model.
func (e *ToolError) WithCause(err error) *ToolError {
	c := *e
	c.cause = err
	return &c
}

// Error returns the message for the model.
func (e *ToolError) Error() string { return e.msg }

// Retryable reports whether another attempt may succeed.
func (e *ToolError) Retryable() bool { return e.retryable }

// Unwrap returns the cause given to WithCause, or nil.
func (e *ToolError) Unwrap() error { return e.cause }

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err as transient: the next attempt may succeed, so it is
// retried. Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

type retryAfterError struct {
	err  error
	wait time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as transient and asks for a wait of at least d before
// the next attempt, as an HTTP Retry-After header does (RFC 9110 §10.2.3).
// The wait is a floor: the retry waits the larger of d and its backoff delay.
// A d of zero or less asks for no extra wait. RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, wait: max(d, 0)}
}

// RetryAfterOf returns the wait asked for by a RetryAfter anywhere in err's
// chain, and whether there was one.
func RetryAfterOf(err error) (time.Duration, bool) {
	if ra, ok := errors.AsType[*retryAfterError](err); ok {
		return ra.wait, true
	}
	return 0, false
}

type notAppliedError struct{ err error }

func (e *notAppliedError) Error() string { return e.err.Error() }
func (e *notAppliedError) Unwrap() error { return e.err }

// NotApplied marks err as a failure that proves the upstream did not act
// on the request: it never reached the upstream (the connection was
// refused, the session was closed before the request was written), or the
// upstream refused it before doing anything (it no longer knew the
// session). The side-effect guard then lets even a tool without an
// idempotency key be sent again. Like Transient it is retried, unless
// Permanent marks it too. Mark only what the error's type or the protocol
// proves; an answer lost after the request went out is not one.
// NotApplied(nil) is nil.
func NotApplied(err error) error {
	if err == nil {
		return nil
	}
	return &notAppliedError{err: err}
}

// IsNotApplied reports whether err's chain holds a NotApplied mark.
func IsNotApplied(err error) bool {
	_, ok := errors.AsType[*notAppliedError](err)
	return ok
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure that another attempt would not fix, but
// that is not the model's to fix either: the tool's configuration is
// wrong, its session with a server is closed. It is kind tool-failed and
// not retried; the model is told the tool failed (never err's text) and not
// to call it again with the same input. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// ArgsError is a tool's input that the tool cannot take: a JSON Schema
// check failed (package argschema), the input repeats an argument, or the
// tool itself found an argument missing or malformed before doing
// anything. It is kind args-invalid: not retried, never routed to a
// fallback, and the model is told what is wrong so it can fix the input and
// call again.
type ArgsError struct {
	// Problems are the problems found, one sentence fragment each, such as
	// `argument "query" is missing`, in the order of the arguments. They
	// reach the model verbatim, and may quote the input (an unknown
	// argument's name), so spans leave them out unless arguments are
	// recorded.
	Problems []string
	// Cause, if set, is the error behind the problems (the server's answer
	// that rejected the arguments), for DEBUG logs; its text never reaches
	// the model.
	Cause error
}

// InvalidArgs returns an *ArgsError with the given problems: kind
// args-invalid. Write each problem for the model, such as `argument
// "amount" must be a positive number`.
func InvalidArgs(problems ...string) *ArgsError {
	return &ArgsError{Problems: problems}
}

// Error joins the problems with "; ".
func (e *ArgsError) Error() string { return strings.Join(e.Problems, "; ") }

// Unwrap returns Cause.
func (e *ArgsError) Unwrap() error { return e.Cause }
