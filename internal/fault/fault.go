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
