package approval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestTheZeroDecisionIsPending(t *testing.T) {
	var d approval.Decision
	if d != approval.Pending {
		t.Fatal("the zero Decision lets a call through")
	}
	for d, want := range map[approval.Decision]string{approval.Pending: "pending", approval.Approved: "approved", approval.Denied: "denied"} {
		if d.String() != want {
			t.Errorf("%d.String() = %q; want %q", d, d.String(), want)
		}
	}
}

func TestApproverFuncDecides(t *testing.T) {
	var asked approval.CallInfo
	a := approval.ApproverFunc(func(_ context.Context, c approval.CallInfo) (approval.Decision, error) {
		asked = c
		return approval.Denied, nil
	})
	d, err := a.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: "A-1"})
	if d != approval.Denied || err != nil || asked.Tool != "refund" {
		t.Errorf("Decide = %v, %v (asked %+v); want denied, nil, about refund", d, err, asked)
	}
}

func TestRequiredIsAPauseNotAFailure(t *testing.T) {
	cause := errors.New("approver down")
	ar := &approval.Required{Tool: "refund", CallID: "call_1", Input: "A-1", Reason: "no approval has been granted", Err: cause}
	err := fmt.Errorf("run: %w", ar)
	if kind, retryable := middleware.Classify(err); kind != middleware.KindApprovalRequired || retryable {
		t.Errorf("Classify = %s, %v; want approval-required, not retryable", kind, retryable)
	}
	var got *approval.Required
	if !errors.As(err, &got) || got != ar || !errors.Is(err, cause) {
		t.Errorf("errors.As/Is do not find the pause and its cause in %v", err)
	}
	if msg := ar.Error(); !strings.Contains(msg, "refund") || !strings.Contains(msg, "call_1") || strings.Contains(msg, "approver down") {
		t.Errorf("Error() = %q; want the tool and call, not the approver's error text", msg)
	}
}
