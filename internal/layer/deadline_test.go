package layer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

func TestDeadline(t *testing.T) {
	t.Run("the deadline holds a tool that ignores its context and has no attempt timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		tool := toolsafe.Wrap(testkit.Stuck(release, nil),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 2}),
			toolsafe.WithDeadline(30*time.Millisecond))
		r := tool.Run(context.Background(), "x")
		if r.Failure == nil || r.Failure.Kind != middleware.KindTimeout || r.Failure.Timeout != 30*time.Millisecond || r.Attempts != 1 {
			t.Fatalf("got %v after %d attempts; want tool-timeout of the 30ms deadline after 1", r.Failure, r.Attempts)
		}
	})
}

// Regression (code review): an answer that settles the call, returned as
// the call's time ran out, was replaced by the context's error and then
// relabelled tool-timeout: a pause did not pause, and a semantic error
// became "did not answer". The two layers that decide it, Deadline and the
// retry, are tested directly, since only they see that moment: Deadline
// here, the retry in package policy.
func TestAnAnswerAtTheDeadlineKeepsItsKind(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind middleware.Kind
	}{
		{"a pause", &approval.Required{Tool: "refund", Reason: "a person must approve"}, middleware.KindApprovalRequired},
		{"a semantic error", middleware.NewToolError("order A-1 does not exist"), middleware.KindToolError},
		{"a panic", &middleware.Failure{Kind: middleware.KindPanic, Tool: "refund"}, middleware.KindPanic},
	}
	for _, tt := range tests {
		t.Run(tt.name+" at the deadline", func(t *testing.T) {
			answersAtTheDeadline := middleware.Func("refund", "refunds", func(ctx context.Context, _ string) (string, error) {
				<-ctx.Done()
				return "", tt.err
			})
			_, err := layer.Deadline(20*time.Millisecond)(answersAtTheDeadline).Call(context.Background(), "x")
			if kind, _ := middleware.Classify(err); kind != tt.kind || !errors.Is(err, tt.err) {
				t.Errorf("got %v (%s); want %v", err, kind, tt.err)
			}
		})
	}
}
