package toolsafe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Regression (code review): an answer that settles the call, returned as
// the call's time ran out, was replaced by the context's error and then
// relabelled tool-timeout: a pause did not pause, and a semantic error
// became "did not answer". The two layers that decide it are tested here
// directly, since only they see that moment.
func TestAnAnswerAtTheDeadlineKeepsItsKind(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind middleware.Kind
	}{
		{"a pause", &middleware.ApprovalRequired{Tool: "refund", Reason: "a person must approve"}, middleware.KindApprovalRequired},
		{"a semantic error", middleware.NewToolError("order A-1 does not exist"), middleware.KindToolError},
		{"a panic", &middleware.Failure{Kind: middleware.KindPanic, Tool: "refund"}, middleware.KindPanic},
	}
	for _, tt := range tests {
		t.Run(tt.name+" at the deadline", func(t *testing.T) {
			answersAtTheDeadline := middleware.Func("refund", "refunds", func(ctx context.Context, _ string) (string, error) {
				<-ctx.Done()
				return "", tt.err
			})
			_, err := middleware.Deadline(20*time.Millisecond)(answersAtTheDeadline).Call(context.Background(), "x")
			if kind, _ := middleware.Classify(err); kind != tt.kind || !errors.Is(err, tt.err) {
				t.Errorf("got %v (%s); want %v", err, kind, tt.err)
			}
		})
		t.Run(tt.name+" as the retry's context ends", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			answersAsItEnds := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) {
				cancel()
				return "", tt.err
			})
			mw, err := policy.Middleware(&policy.Retry{MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			_, err = mw(answersAsItEnds).Call(ctx, "x")
			if !errors.Is(err, tt.err) {
				t.Errorf("got %v; want %v", err, tt.err)
			}
		})
	}
}
