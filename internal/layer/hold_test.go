package layer_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestHold(t *testing.T) {
	t.Run("without an abandoned attempt release runs in done", func(t *testing.T) {
		var released atomic.Int32
		ctx, done := layer.Hold(context.Background(), func() { released.Add(1) })
		tool := layer.AttemptTimeout(time.Hour)(middleware.Func("quick", "", func(context.Context, string) (string, error) { return "ok", nil }))
		if _, err := tool.Call(ctx, ""); err != nil {
			t.Fatal(err)
		}
		done()
		if released.Load() != 1 {
			t.Fatalf("released %d times; want 1", released.Load())
		}
	})
	t.Run("an abandoned attempt keeps it until its tool returns", func(t *testing.T) {
		unblock := make(chan struct{})
		returned := make(chan struct{})
		var released atomic.Int32
		ctx, done := layer.Hold(context.Background(), func() {
			released.Add(1)
			close(returned)
		})
		tool := layer.AttemptTimeout(time.Millisecond)(middleware.Func("stuck", "", func(context.Context, string) (string, error) {
			<-unblock // ignores its context
			return "late", nil
		}))
		ctx, _ = call.Begin(ctx, "stuck", "", "", nil)
		_, err := tool.Call(ctx, "")
		if kind, _ := middleware.Classify(err); kind != middleware.KindTimeout {
			t.Fatalf("err %v; want a timeout", err)
		}
		done()
		if released.Load() != 0 {
			t.Fatal("released while the tool still runs")
		}
		close(unblock)
		<-returned
		if released.Load() != 1 {
			t.Fatalf("released %d times; want 1", released.Load())
		}
	})
}
