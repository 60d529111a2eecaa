package test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

// A destructive call a person changed before approving, whose attempt may
// have been applied (it timed out), asks again at its retry about what the
// retry sends: the person's arguments, under the same idempotency key. The
// request says so, approving it as shown sends them again (one body under
// one key), and the model is told that its call was changed. It holds
// across the pause, its JSON wire form and run.Resume.
func TestARetryOfAChangedDestructiveCallAsksAboutWhatItSends(t *testing.T) {
	grants := approval.NewGrants()
	var mu sync.Mutex
	var sent, keys []string
	first := true
	refund := middleware.Func("refund", "Refunds an order.", func(ctx context.Context, input string) (string, error) {
		mu.Lock()
		sent, keys = append(sent, input), append(keys, middleware.IdempotencyKey(ctx))
		wasFirst := first
		first = false
		mu.Unlock()
		if wasFirst {
			<-ctx.Done() // the first attempt times out: it may have been applied
			return "", ctx.Err()
		}
		return `{"refunded_eur":25}`, nil
	})
	tool := toolsafe.Wrap(refund,
		toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithTimeout(50*time.Millisecond),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Constant(time.Millisecond)}))
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
	if req.Input != asked || req.Sends != edited || req.Attempt != 2 {
		t.Fatalf("attempt 2's pause: input %s, sends %s, attempt %d; want the model's input, sending alice's, attempt 2", req.Input, req.Sends, req.Attempt)
	}
	// The pause crosses a process as JSON.
	wire, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var carried approval.Required
	if err := json.Unmarshal(wire, &carried); err != nil || carried.Sends != edited {
		t.Fatalf("the pause read back from %s: sends %q, %v", wire, carried.Sends, err)
	}
	reqs := grants.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests wait; want attempt 2's", len(reqs))
	}
	if c := reqs[0].Call; c.CanonicalInput != edited || !c.Changed || !c.MayHaveApplied || !strings.Contains(c.Reason(), "a person changed its arguments") {
		t.Errorf("attempt 2 asks about %s (changed %v, may have applied %v, %q); want what it sends, %s, said so",
			c.CanonicalInput, c.Changed, c.MayHaveApplied, c.Reason(), edited)
	}
	if _, err := grants.Reply(reqs[0].ID, approval.Reply{Decision: approval.Approved, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	r := tool.Run(run.Resume(ctx, &carried), asked)
	if r.Failure != nil {
		t.Fatalf("the approved retry failed: %v", r.Failure)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || sent[0] != sent[1] || keys[0] != keys[1] || keys[0] == "" {
		t.Fatalf("sent %q under keys %q; want alice's arguments twice, under one key", sent, keys)
	}
	if obs := r.Observation(); !strings.Contains(obs, "A person changed this call") || !strings.Contains(obs, `"amount_eur" is now 25`) {
		t.Errorf("the model reads %q; want it told that a person changed its call", obs)
	}
}
