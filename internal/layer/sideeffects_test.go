package layer_test

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestGuardSideEffects(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	failing := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) { return "", reset })
	for _, tt := range []struct {
		s         middleware.SideEffects
		retryable bool
		effect    middleware.SideEffect
	}{
		{middleware.NoSideEffects, true, middleware.SideEffectNone},
		{middleware.SideEffectsWithKey, true, middleware.SideEffectUnknown},
		{middleware.SideEffectsWithoutKey, false, middleware.SideEffectUnknown},
	} {
		t.Run(tt.s.String(), func(t *testing.T) {
			ctx, _ := call.Begin(context.Background(), "refund", "", "A-1", nil)
			// The attempt timeout begins the attempt, as inside toolsafe.
			_, err := layer.GuardSideEffects(tt.s)(layer.AttemptTimeout(0)(failing)).Call(ctx, "A-1")
			_, retryable := middleware.Classify(err)
			f := call.FailureOf(ctx, err)
			if retryable != tt.retryable || f.SideEffect != tt.effect {
				t.Errorf("retryable %v, side effect %v; want %v, %v", retryable, f.SideEffect, tt.retryable, tt.effect)
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("the cause was lost: %v", err)
			}
		})
	}
}
