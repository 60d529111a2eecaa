//go:build review28

// This file reproduces a defect the review of issue 28 found and left
// open (see its report): go test -tags review28 -run TestALaterAttemptOfAChanged ./test

package test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

func TestReview28ALaterAttemptOfAChangedDestructiveCallShowsWhatWasSent(t *testing.T) {
	grants := approval.NewGrants()
	var sent []string
	first := true
	refund := middleware.Func("refund", "refunds an order", func(ctx context.Context, input string) (string, error) {
		sent = append(sent, input+" key="+middleware.IdempotencyKey(ctx))
		if first {
			first = false
			<-ctx.Done() // the first attempt times out: it may have been applied
			return "", ctx.Err()
		}
		return "refunded", nil
	})
	tool := toolsafe.Wrap(refund,
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithTimeout(50*time.Millisecond),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Backoff{Base: time.Millisecond, Max: time.Millisecond, Multiplier: 1, Rand: func() float64 { return 0 }}}))
	const asked, edited = `{"order":"A-1001","amount_eur":250}`, `{"amount_eur":25,"order":"A-1001"}`
	ctx := run.With(context.Background(), "run-each", run.NewMemoryLedger())
	_, err := tool.Call(ctx, asked)
	var req *approval.Required
	if !errors.As(err, &req) {
		t.Fatalf("no pause: %v", err)
	}
	if _, err := grants.Reply(grants.Requests()[0].ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: edited}); err != nil {
		t.Fatal(err)
	}
	_, err = tool.Call(run.Resume(ctx, req), asked)
	if !errors.As(err, &req) {
		t.Fatalf("attempt 2 did not pause: %v (sent %q)", err, sent)
	}
	reqs := grants.Requests()
	if len(reqs) != 1 || !reqs[0].Call.MayHaveApplied {
		t.Fatalf("requests %+v", reqs)
	}
	// Attempt 1 sent the person's input; the request for attempt 2 says
	// "approving sends it again" and shows the model's input.
	if got := reqs[0].Call.CanonicalInput; got != edited {
		t.Errorf("attempt 2 asks about %s, but attempt 1 sent %s (sent: %q)", got, edited, sent)
	}
	// A person who approves attempt 2 as shown ("approving sends it
	// again") sends the model's 250 under the key attempt 1 sent 25 with.
	if _, err := grants.Reply(reqs[0].ID, approval.Reply{Decision: approval.Approved, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	r := tool.Run(run.Resume(ctx, req), asked)
	if len(sent) == 2 && sent[0][len(sent[0])-32:] == sent[1][len(sent[1])-32:] && sent[0][:len(edited)] != sent[1][:len(edited)] {
		t.Errorf("two bodies under one idempotency key: %q; the model reads %q", sent, r.Observation())
	}
}

// Review28: a person corrected the refund to 25 EUR; the changed call
// failed, and the fallback asks about the model's 250 EUR, its request
// saying nothing of the correction: approving it opens a ticket for 250.
func TestReview28AFallbackAfterAChangedCallKeepsThePersonsChanges(t *testing.T) {
	grants := approval.NewGrants()
	primary := middleware.Func("refund", "refunds", func(context.Context, string) (string, error) { return "", io.ErrUnexpectedEOF })
	alt := middleware.Func("refund_ticket", "opens a ticket", func(context.Context, string) (string, error) { return "ticket opened", nil })
	tool := toolsafe.Wrap(primary, toolsafe.WithApproval(grants), toolsafe.WithFallback(fallback.To(alt)))
	ctx := run.With(context.Background(), "run-fb", run.NewMemoryLedger())
	const asked = `{"order":"A-1001","amount_eur":250}`
	_, err := tool.Call(ctx, asked)
	var req *approval.Required
	if !errors.As(err, &req) {
		t.Fatal(err)
	}
	if _, err := grants.Reply(grants.Requests()[0].ID, approval.Reply{Decision: approval.Approved, By: "alice", Input: `{"order":"A-1001","amount_eur":25}`}); err != nil {
		t.Fatal(err)
	}
	tool.Run(run.Resume(ctx, req), asked)
	for _, q := range grants.Requests() {
		if q.Call.Tool == "refund_ticket" && q.Call.CanonicalInput != `{"amount_eur":25,"order":"A-1001"}` {
			t.Errorf("the fallback asks about %s, which alice corrected to 25", q.Call.CanonicalInput)
		}
	}
}
