package middleware

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go/timeout"
)

// ToolError is a semantic failure reported by a tool: the input names
// something that does not exist, a value is out of range, the action is not
// allowed. Its message is meant for the model and reaches it verbatim, so
// write it as advice the model can act on. It is not retried unless made with
// RetryableToolError.
type ToolError struct {
	msg       string
	retryable bool
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
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.wait, true
	}
	return 0, false
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

// finalError ends the call with err's kind, not retried: an attempt of a
// tool without an idempotency key that may have been applied.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

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

// refusal is an attempt refused before it reached the tool, by the layer
// that guards a dependency.
type refusal struct {
	err        error
	dependency string
	wait       time.Duration
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// Refused returns err, a refusal by a layer that guards a dependency
// (circuitbreaker.ErrOpen, bulkhead.ErrFull, a rate limiter's ErrExceeded,
// budget.ErrExceeded), with the name of the dependency it guards and, for
// an open circuit, the time left before it lets a probe through: the
// model's message names both. Its kind is err's (see Classify). A
// dependency of "" names none; Refused(nil, ...) is nil.
func Refused(err error, dependency string, wait time.Duration) error {
	if err == nil {
		return nil
	}
	return &refusal{err: err, dependency: dependency, wait: max(wait, 0)}
}

// panicError is a panic recovered from a tool (Recover) or an approver.
type panicError struct {
	who   string // "the tool", "the approver"
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.who, e.value) }

// errGoexit is how an attempt ends whose tool called runtime.Goexit.
var errGoexit = &panicError{who: "the tool", value: "runtime.Goexit"}

// errDenied is the answer of a gate whose approver said Denied.
var errDenied = errors.New("toolsafe: approval denied")

// errStuck refuses an attempt while too many earlier attempts at the same
// tool are still running after their time ran out.
var errStuck = errors.New("toolsafe: earlier attempts at this tool are still running after their time ran out")

// errTooMany refuses an attempt while very many attempts at the same tool
// are in flight (see MaxAbandoned).
var errTooMany = errors.New("toolsafe: too many attempts at this tool are in flight")

// attemptTimeoutError is an attempt whose own time limit passed.
type attemptTimeoutError struct {
	limit time.Duration
	err   error // what the tool returned, if it returned
}

func (e *attemptTimeoutError) Error() string {
	msg := fmt.Sprintf("toolsafe: the attempt did not answer within %v", e.limit)
	if e.err != nil {
		msg += ": " + e.err.Error()
	}
	return msg
}
func (e *attemptTimeoutError) Unwrap() error { return e.err }

// Is makes an attempt timeout failsafe-go's timeout.ErrExceeded too.
func (e *attemptTimeoutError) Is(target error) bool { return target == timeout.ErrExceeded }

// limitCause is the cause of a context that one of toolsafe's own time
// limits ended: the call's deadline or an attempt's timeout.
type limitCause struct {
	ended Ended
	limit time.Duration
	call  *Call // the call whose limit it is
}

func (c *limitCause) Error() string {
	if c.ended == EndedByAttemptTimeout {
		return fmt.Sprintf("toolsafe: attempt timeout %v passed", c.limit)
	}
	return fmt.Sprintf("toolsafe: the call's deadline %v passed", c.limit)
}

// Is makes the cause context.DeadlineExceeded too.
func (c *limitCause) Is(target error) bool { return target == context.DeadlineExceeded }

// Ended says how a context ended.
type Ended int

const (
	// NotEnded: the context has not ended.
	NotEnded Ended = iota
	// EndedByCaller: the caller canceled the context or its own deadline
	// passed. It is nobody's fault: a circuit breaker counts it neither
	// way, and no span turns red for it.
	EndedByCaller
	// EndedByDeadline: the call's own deadline (Deadline,
	// toolsafe.WithDeadline) passed: the dependency took too long.
	EndedByDeadline
	// EndedByAttemptTimeout: the attempt's own timeout (AttemptTimeout,
	// toolsafe.WithTimeout) passed: the dependency took too long.
	EndedByAttemptTimeout
)

// HowEnded tells whether ctx has ended and, if it has, whether one of the
// time limits of the call in ctx ended it (EndedByDeadline, EndedByAttemptTimeout)
// or its caller did (EndedByCaller). It reads context.Cause, never guesses.
// For a toolsafe call made inside another one's attempt, the outer call's
// limits are the caller's.
func HowEnded(ctx context.Context) Ended {
	if ctx.Err() == nil {
		return NotEnded
	}
	var lc *limitCause
	if errors.As(context.Cause(ctx), &lc) && lc.call == CallFrom(ctx) {
		return lc.ended
	}
	return EndedByCaller
}

// ApprovalRequired is returned, as an error, by a call that needs a human's
// approval first. It is not a failure: it is never retried, never routed to
// a fallback, and langchaingo's executor returns it from the run, where
// errors.As finds it. Resume the run once the approval is granted (see
// Resume, which keeps the paused call's idempotency key).
type ApprovalRequired struct {
	// Tool is the tool waiting; CallID the paused call's ID; Input its
	// input, to which a grant is bound (see Grants; inputs that are the same
	// JSON match whatever their key order or spacing).
	Tool, CallID, Input string
	// Reason says, for the person asked, why approval is needed now, e.g.
	// that a retry of a destructive action needs its own approval.
	Reason string
	// Attempt is the number of the attempt that waits: 1 for the first,
	// more when a retry of a destructive tool needs a fresh approval.
	Attempt int
	// IdempotencyKey is the paused call's key; Resume carries it over to the
	// resumed call.
	IdempotencyKey string
	// RunID is the ID of the agent run the call paused in (see WithRun), or
	// "" outside a scoped run. Resume continues that run.
	RunID string
	// Err is the Approver's error when it could not decide (the gate fails
	// closed and pauses); nil otherwise. Its text is for the program and
	// logs, never for the model.
	Err error
}

// Unwrap returns Err.
func (e *ApprovalRequired) Unwrap() error { return e.Err }

// Error says which tool waits for approval and why.
func (e *ApprovalRequired) Error() string {
	msg := "toolsafe: " + e.Tool + " needs approval"
	if e.CallID != "" {
		msg += " (call " + e.CallID + ")"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}
