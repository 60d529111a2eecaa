package test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// pauseAndEdit makes tool pause on asked in a run, has alice approve it
// with edited instead, and resumes it: the result the model reads.
func pauseAndEdit(t *testing.T, grants *approval.Grants, tool *toolsafe.Tool, runID, asked, edited string) middleware.Result {
	t.Helper()
	ctx := run.With(context.Background(), runID, run.NewMemoryLedger())
	_, err := tool.Call(ctx, asked)
	var req *approval.Required
	if !errors.As(err, &req) {
		t.Fatalf("no pause: %v", err)
	}
	id := grants.Requests()[0].ID
	if _, err := grants.Reply(id, approval.Reply{Decision: approval.Approved, By: "alice", Input: edited}); err != nil {
		t.Fatal(err)
	}
	return tool.Run(run.Resume(ctx, req), asked)
}

func TestTheModelIsToldOfAPersonsChangesWhenTheChangedCallFails(t *testing.T) {
	grants := approval.NewGrants()
	refund := middleware.Func("refund", "refunds an order", func(_ context.Context, input string) (string, error) {
		if strings.Contains(input, `"A-2002"`) {
			return "", middleware.NewToolError("order A-2002 was already refunded")
		}
		return "refunded", nil
	})
	tool := toolsafe.Wrap(refund, toolsafe.WithApproval(grants))
	r := pauseAndEdit(t, grants, tool, "run-fail", `{"order":"A-1001","amount_eur":250}`, `{"order":"A-2002","amount_eur":25}`)
	if r.Status() != "error" {
		t.Fatalf("status %s: %s", r.Status(), r.Observation())
	}
	// The model asked for A-1001 and reads that A-2002 was already
	// refunded: unless it is told a person changed its call, it cannot
	// make sense of this, and may call again with its own arguments.
	const want = `A person changed this call before approving it, and what follows is about their arguments, not yours; "amount_eur" is now 25, "order" is now "A-2002". Do not call it again with the original arguments. order A-2002 was already refunded`
	if obs := r.Observation(); obs != want {
		t.Fatalf("the model reads\n%q\nwant\n%q", obs, want)
	}
	if msg := r.Failure.MessageWithoutArguments(); strings.Contains(msg, "A-2002\"") {
		t.Fatalf("the span's text quotes the changed arguments: %q", msg)
	}
}
