package layer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

func TestPanic(t *testing.T) {
	boom := middleware.Func("boom", "panics", func(context.Context, string) (string, error) {
		panic("secret-token-123 in a panic")
	})
	tool := toolsafe.Wrap(boom,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3}),
		toolsafe.WithTimeout(time.Second))
	r := tool.Run(context.Background(), "x")
	if r.Failure == nil || r.Failure.Kind != middleware.KindPanic || r.Attempts != 1 || r.Failure.Retryable {
		t.Fatalf("got %v after %d attempts; want tool-panic after 1", r.Failure, r.Attempts)
	}
	if strings.Contains(r.Observation(), "secret-token") {
		t.Errorf("the panic value reached the model: %q", r.Observation())
	}
	t.Run("without any timeout the panic is recovered too", func(t *testing.T) {
		r := toolsafe.Wrap(boom).Run(context.Background(), "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindPanic {
			t.Fatalf("got %v; want tool-panic", r.Failure)
		}
	})
}
