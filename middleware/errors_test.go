package middleware_test

import (
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestMarkersOfNothingAreNothing(t *testing.T) {
	if middleware.Transient(nil) != nil || middleware.RetryAfter(nil, time.Second) != nil || middleware.Permanent(nil) != nil {
		t.Error("a marker of a nil error is not nil: a tool that succeeded would fail")
	}
}

func TestRetryAfterWaitsAtLeastZero(t *testing.T) {
	if d, ok := middleware.RetryAfterOf(middleware.RetryAfter(errors.New("busy"), -time.Second)); !ok || d != 0 {
		t.Errorf("RetryAfterOf(RetryAfter(err, -1s)) = %v, %v; want 0, true", d, ok)
	}
}

func TestAToolErrorKeepsItsCauseOutOfItsMessage(t *testing.T) {
	cause := errors.New(`pq: relation "invoices" does not exist`)
	err := middleware.NewToolError("invoice %s was not found", "INV-9").WithCause(cause)
	if err.Error() != "invoice INV-9 was not found" || !errors.Is(err, cause) || err.Retryable() {
		t.Errorf("Error %q, Is(cause) %v, Retryable %v; want the message alone, the cause behind it, not retryable",
			err.Error(), errors.Is(err, cause), err.Retryable())
	}
	if !middleware.RetryableToolError("try later").Retryable() {
		t.Error("RetryableToolError is not retryable")
	}
}

func TestInvalidArgsJoinsItsProblems(t *testing.T) {
	err := middleware.InvalidArgs(`argument "a" is missing`, `argument "b" must be a number`)
	if err.Error() != `argument "a" is missing; argument "b" must be a number` {
		t.Errorf("Error() = %q", err.Error())
	}
	if kind, _ := middleware.Classify(err); kind != middleware.KindArgsInvalid {
		t.Errorf("kind %s; want args-invalid", kind)
	}
}
