package fallback_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"go.uber.org/goleak"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRoutes(t *testing.T) {
	alt := middleware.Func("alt", "", nil)
	f := fallback.To(alt)
	for _, k := range fallback.DefaultKinds() {
		if !f.Routes(k) {
			t.Errorf("%s is not routed by default", k)
		}
	}
	for _, k := range []middleware.Kind{middleware.KindApprovalRequired, middleware.KindApprovalDenied,
		middleware.KindArgsInvalid, middleware.KindCanceled, middleware.KindBusy, middleware.KindPanic} {
		if f.Routes(k) {
			t.Errorf("%s is routed by default", k)
		}
	}
	if f := fallback.To(alt, fallback.On(middleware.KindBusy)); !f.Routes(middleware.KindBusy) || f.Routes(middleware.KindFailed) || f.Err() != nil {
		t.Errorf("On(tool-busy) did not replace the defaults: %v", f.Err())
	}
	if f := fallback.To(alt, fallback.On(middleware.KindCanceled)); f.Err() == nil || f.Routes(middleware.KindCanceled) {
		t.Error("On(canceled) was accepted")
	}
}

// run calls tool as toolsafe does: with a call record, through Surface.
func run(tool tools.Tool, input string) middleware.Result {
	ctx, call := call.Begin(context.Background(), tool.Name(), "", input, slog.New(slog.DiscardHandler))
	out, err := layer.Surface()(tool).Call(ctx, input)
	return call.Result(ctx, out, err)
}

// A plain tools.Tool as the alternative: called once, as a call of its own,
// so it cannot reuse the primary's idempotency key.
func TestPlainAlternative(t *testing.T) {
	var keySeen string
	alt := middleware.Func("alt", "", func(ctx context.Context, input string) (string, error) {
		keySeen = middleware.IdempotencyKey(ctx)
		if input == "fail" {
			return "", errors.New("alt is down too")
		}
		return "alt: " + input, nil
	})
	primary := middleware.Func("primary", "", func(context.Context, string) (string, error) {
		return "", errors.New("primary is down")
	})
	tool := fallback.To(alt).Middleware(nil)(primary)

	r := run(tool, "x")
	primaryKey := r.CallID // run's record
	if r.Output != "alt: x" || r.Failure != nil || r.Fallback != "alt" || keySeen == "" || keySeen == primaryKey {
		t.Fatalf("Result %+v; key seen %q", r, keySeen)
	}
	if r.Primary == nil || r.Primary.Kind != middleware.KindFailed {
		t.Errorf("Primary = %+v; want the primary's tool-failed, the reason it fell back", r.Primary)
	}

	f := run(tool, "fail").Failure
	if f == nil || f.FallbackFailure == nil || f.FallbackFailure.Tool != "alt" {
		t.Fatalf("failure = %+v; want the primary's failure with the alternative's", f)
	}
	if msg := f.Error(); !strings.Contains(msg, "primary failed") || !strings.Contains(msg, "The fallback tool alt was tried instead and failed too: alt failed") ||
		strings.Contains(msg, "down") {
		t.Errorf("message %q", msg)
	}
}
