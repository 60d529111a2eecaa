// Package fault holds the errors toolsafe's own layers end an attempt
// with, and the context keys of a call: package middleware classifies them
// (Classify) and words them for the model, the layers make them. None of
// them is a tool author's concern, so none is public.
package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/timeout"
)

// CallKey is the context key of the call record (package internal/call).
type CallKey struct{}

// AttemptKey is the context key of the number of the attempt running.
type AttemptKey struct{}

// Identity is what a call record tells a tool about its call.
type Identity interface {
	ID() string
	Key() string
}

// Final ends the call with Err's kind, not retried: an attempt of a tool
// without an idempotency key that may have been applied.
type Final struct{ Err error }

func (e *Final) Error() string { return e.Err.Error() }
func (e *Final) Unwrap() error { return e.Err }

// Panic is a panic recovered from a tool or an approver.
type Panic struct {
	Who   string // "the tool", "the approver"
	Value any
}

func (e *Panic) Error() string { return fmt.Sprintf("%s panicked: %v", e.Who, e.Value) }

// Goexit is how an attempt ends whose tool called runtime.Goexit.
var Goexit = &Panic{Who: "the tool", Value: "runtime.Goexit"}

// ErrDenied is the answer of a gate whose approver said Denied.
var ErrDenied = errors.New("toolsafe: approval denied")

// ErrStuck refuses an attempt while too many earlier attempts at the same
// tool are still running after their time ran out.
var ErrStuck = errors.New("toolsafe: earlier attempts at this tool are still running after their time ran out")

// ErrTooMany refuses an attempt while very many attempts at the same tool are
// in flight.
var ErrTooMany = errors.New("toolsafe: too many attempts at this tool are in flight")

// Refusal is an attempt refused before it reached the tool, by the layer
// that guards a dependency.
type Refusal struct {
	Err        error
	Dependency string
	Wait       time.Duration
}

func (e *Refusal) Error() string { return e.Err.Error() }
func (e *Refusal) Unwrap() error { return e.Err }

// Refused returns err, a refusal by a layer that guards a dependency
// (circuitbreaker.ErrOpen, bulkhead.ErrFull, a rate limiter's ErrExceeded,
// budget.ErrExceeded), with the name of the dependency it guards and, for
// an open circuit, the time left before it lets a probe through: the
// model's message names both. Refused(nil, ...) is nil.
func Refused(err error, dependency string, wait time.Duration) error {
	if err == nil {
		return nil
	}
	return &Refusal{Err: err, Dependency: dependency, Wait: max(wait, 0)}
}

// AttemptTimeout is an attempt whose own time limit passed.
type AttemptTimeout struct {
	Limit time.Duration
	Err   error // what the tool returned, if it returned
}

func (e *AttemptTimeout) Error() string {
	msg := fmt.Sprintf("toolsafe: the attempt did not answer within %v", e.Limit)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *AttemptTimeout) Unwrap() error { return e.Err }

// Is makes an attempt timeout failsafe-go's timeout.ErrExceeded too.
func (e *AttemptTimeout) Is(target error) bool { return target == timeout.ErrExceeded }

// Ended says how a context ended.
type Ended int

const (
	// NotEnded: the context has not ended.
	NotEnded Ended = iota
	// ByCaller: the caller canceled the context or its own deadline
	// passed. It is nobody's fault: a circuit breaker counts it neither
	// way, and no span turns red for it.
	ByCaller
	// ByDeadline: the call's own deadline (toolsafe.WithDeadline) passed:
	// the dependency took too long.
	ByDeadline
	// ByAttemptTimeout: the attempt's own timeout (toolsafe.WithTimeout)
	// passed: the dependency took too long.
	ByAttemptTimeout
)

// LimitCause is the cause of a context that one of toolsafe's own time
// limits ended: the call's deadline or an attempt's timeout.
type LimitCause struct {
	Ended Ended
	Limit time.Duration
	Call  any // the call record whose limit it is
}

func (c *LimitCause) Error() string {
	if c.Ended == ByAttemptTimeout {
		return fmt.Sprintf("toolsafe: attempt timeout %v passed", c.Limit)
	}
	return fmt.Sprintf("toolsafe: the call's deadline %v passed", c.Limit)
}

// Is makes the cause context.DeadlineExceeded too.
func (c *LimitCause) Is(target error) bool { return target == context.DeadlineExceeded }

// HowEnded tells whether ctx has ended and, if it has, whether one of the
// time limits of the call in ctx ended it (ByDeadline, ByAttemptTimeout) or
// its caller did (ByCaller). It reads context.Cause, never guesses. For a
// toolsafe call made inside another one's attempt, the outer call's limits
// are the caller's.
func HowEnded(ctx context.Context) Ended {
	if ctx.Err() == nil {
		return NotEnded
	}
	if lc, ok := errors.AsType[*LimitCause](context.Cause(ctx)); ok && lc.Call == ctx.Value(CallKey{}) {
		return lc.Ended
	}
	return ByCaller
}

// Unavailable is a call that was not made because the store that must
// record it first (the run ledger) could not: the store's condition, which
// passes, not the tool's failure.
type Unavailable struct{ Err error }

func (e *Unavailable) Error() string {
	return "toolsafe: the run ledger is unavailable, so the call was not made: " + e.Err.Error()
}
func (e *Unavailable) Unwrap() error { return e.Err }

// Corrupt is a call that was not made because the run ledger holds a
// record of it (or counts) that cannot be read: not an outage, which
// passes, so the call fails for good.
type Corrupt struct{ Err error }

func (e *Corrupt) Error() string {
	return "toolsafe: the run ledger's record of the call cannot be read, so the call was not made: " + e.Err.Error()
}
func (e *Corrupt) Unwrap() error { return e.Err }

// Denied is ErrDenied with the message a person gave the model with the
// denial (approval.Verdict.Message): plain text, bounded by the approver.
type Denied struct{ Message string }

func (e *Denied) Error() string        { return ErrDenied.Error() }
func (e *Denied) Is(target error) bool { return target == ErrDenied }
