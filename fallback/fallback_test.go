package fallback_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

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

// A plain tools.Tool as the alternative: called once, without the primary's
// call record, so it cannot reuse the primary's idempotency key.
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
	tool := fallback.To(alt).Middleware()(primary)

	call := middleware.NewCall("primary", "")
	out, err := tool.Call(middleware.WithCall(context.Background(), call), "x")
	if out != "alt: x" || err != nil || call.Fallback() != "alt" || keySeen != "" {
		t.Fatalf("Call = %q, %v; fallback %q, key seen %q", out, err, call.Fallback(), keySeen)
	}

	_, err = tool.Call(middleware.WithCall(context.Background(), middleware.NewCall("primary", "")), "fail")
	var f *middleware.Failure
	if !errors.As(err, &f) || f.FallbackFailure == nil || f.FallbackFailure.Tool != "alt" {
		t.Fatalf("err = %v; want the primary's failure with the alternative's", err)
	}
	if msg := f.Error(); !strings.Contains(msg, "primary failed") || !strings.Contains(msg, "The fallback tool alt was tried instead and failed too: alt failed") ||
		strings.Contains(msg, "down") {
		t.Errorf("message %q", msg)
	}
}
