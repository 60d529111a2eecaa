package fallback_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

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
		call := middleware.NewCall("primary", "")
		call.SetLogger(slog.New(slog.DiscardHandler))
		ctx := middleware.WithCall(context.Background(), call)
		_, err := fallback.To(alt).Middleware()(primaryDown).Call(ctx, "x")
		var f *middleware.Failure
		if !errors.As(err, &f) || f.FallbackFailure == nil || f.FallbackFailure.Kind != middleware.KindPanic || f.FallbackFailure.Tool != "alt" {
			t.Fatalf("err = %v; want the primary's failure with the alternative's tool-panic", err)
		}
	})

	t.Run("the call returns when ctx ends", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		alt := middleware.Func("alt", "", func(context.Context, string) (string, error) { <-release; return "late", nil })
		ctx, cancel := context.WithTimeout(middleware.WithCall(context.Background(), middleware.NewCall("primary", "")), 20*time.Millisecond)
		defer cancel()
		errc := make(chan error, 1)
		go func() { _, err := fallback.To(alt).Middleware()(primaryDown).Call(ctx, "x"); errc <- err }()
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
// *toolsafe.Tool does.
type structured struct{ tools.Tool }

func (s structured) Run(ctx context.Context, input string) middleware.Result {
	out, _ := s.Call(ctx, input)
	return middleware.Result{Tool: s.Name(), Output: out}
}

// GuardPlain replaces a plain alternative only.
func TestGuardPlain(t *testing.T) {
	alt := middleware.Func("alt", "", func(context.Context, string) (string, error) { return "plain", nil })
	guarded := middleware.Func("alt", "", func(context.Context, string) (string, error) { return "guarded", nil })
	n := 0
	f := fallback.To(alt).GuardPlain(func(tools.Tool) tools.Tool { n++; return guarded })
	out, err := f.Middleware()(primaryDown).Call(middleware.WithCall(context.Background(), middleware.NewCall("primary", "")), "x")
	if out != "guarded" || err != nil || n != 1 {
		t.Fatalf("Call = %q, %v after %d guards; want guarded, once", out, err, n)
	}
	f = fallback.To(structured{alt}).GuardPlain(func(tools.Tool) tools.Tool { n++; return guarded })
	out, err = f.Middleware()(primaryDown).Call(middleware.WithCall(context.Background(), middleware.NewCall("primary", "")), "x")
	if out != "plain" || err != nil || n != 1 {
		t.Fatalf("structured alternative: Call = %q, %v after %d guards; want plain, not guarded", out, err, n)
	}
}
