package fallback_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

var primaryDown = middleware.Func("primary", "", func(context.Context, string) (string, error) {
	return "", errors.New("primary is down")
})

// Used through Middleware alone, a plain alternative is never called bare:
// its panic is recovered, and the call returns when ctx ends even if the
// alternative ignores it.
func TestPlainAlternativeIsNeverCalledBare(t *testing.T) {
	t.Run("a panic is recovered as tool-panic", func(t *testing.T) {
		alt := middleware.Func("alt", "", func(context.Context, string) (string, error) { panic("bug") })
		f := run(fallback.To(alt).Middleware(nil)(primaryDown), "x").Failure
		if f == nil || f.FallbackFailure == nil || f.FallbackFailure.Kind != middleware.KindPanic || f.FallbackFailure.Tool != "alt" {
			t.Fatalf("failure = %+v; want the primary's failure with the alternative's tool-panic", f)
		}
	})

	t.Run("the call returns when ctx ends", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		alt := middleware.Func("alt", "", func(context.Context, string) (string, error) { <-release; return "late", nil })
		ctx, _ := call.Begin(context.Background(), "primary", "", "x", nil)
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		errc := make(chan error, 1)
		go func() { _, err := fallback.To(alt).Middleware(nil)(primaryDown).Call(ctx, "x"); errc <- err }()
		select {
		case err := <-errc:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v; want the caller's context.DeadlineExceeded", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not return when ctx ended")
		}
	})
}

// structured is an alternative that reports a structured outcome, as a
// *toolsafe.Tool does: a Runner.
type structured struct{ tools.Tool }

func (s structured) Run(ctx context.Context, input string) middleware.Result {
	out, _ := s.Call(ctx, input)
	return middleware.Result{Tool: s.Name(), Output: "structured " + out}
}

// The Runner given to Middleware runs the alternative; with none, an
// alternative that is a Runner runs itself.
func TestTheRunnerRunsTheAlternative(t *testing.T) {
	alt := middleware.Func("alt", "", func(context.Context, string) (string, error) { return "plain", nil })
	n := 0
	given := fallback.RunnerFunc(func(ctx context.Context, input string) middleware.Result {
		n++
		return middleware.Result{Tool: "alt", Output: "given " + input}
	})
	if r := run(fallback.To(alt).Middleware(given)(primaryDown), "x"); r.Output != "given x" || n != 1 {
		t.Fatalf("with a Runner: %+v after %d runs; want given x, once", r, n)
	}
	if r := run(fallback.To(structured{alt}).Middleware(nil)(primaryDown), "x"); r.Output != "structured plain" {
		t.Fatalf("a Runner alternative: %+v; want its own Run", r)
	}
}
