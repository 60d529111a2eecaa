package testkit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
)

// Kind returns the kind of r's failure, or "" when r succeeded.
func Kind(r middleware.Result) middleware.Kind {
	if r.Failure == nil {
		return ""
	}
	return r.Failure.Kind
}

// Paused returns the *approval.Required in err's chain, and fails
// t at once when there is none.
func Paused(t testing.TB, err error) *approval.Required {
	t.Helper()
	var ar *approval.Required
	if !errors.As(err, &ar) {
		t.Fatalf("err = %v; want *approval.Required", err)
	}
	return ar
}

// Within runs w with input on ctx and returns its Result, failing t at once
// if it has not returned after d: a generous bound, for calls that used to
// hang.
func Within(t testing.TB, d time.Duration, w *toolsafe.Tool, ctx context.Context, input string) middleware.Result {
	t.Helper()
	done := make(chan middleware.Result, 1)
	go func() { done <- w.Run(ctx, input) }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", w.Name(), d)
	}
	panic("unreachable")
}
