package middleware_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

func TestOutsideToolsafeACallHasNoKeyIDOrAttempt(t *testing.T) {
	ctx := context.Background()
	if middleware.IdempotencyKey(ctx) != "" || middleware.CallID(ctx) != "" || middleware.AttemptNumber(ctx) != 0 {
		t.Error("a context toolsafe never saw has a key, an ID or an attempt")
	}
}

func TestEveryAttemptOfACallSendsTheSameKey(t *testing.T) {
	type seen struct {
		key, id string
		n       int
	}
	var attempts []seen
	tool := toolsafe.Wrap(middleware.Func("refund", "", func(ctx context.Context, _ string) (string, error) {
		attempts = append(attempts, seen{middleware.IdempotencyKey(ctx), middleware.CallID(ctx), middleware.AttemptNumber(ctx)})
		if len(attempts) < 3 {
			return "", middleware.Transient(errors.New("reset"))
		}
		return "done", nil
	}), toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0)}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	r := tool.Run(context.Background(), `{"order":"A-1"}`)
	if r.Status() != "ok" || len(attempts) != 3 {
		t.Fatalf("status %s after %d attempts; want ok after 3", r.Status(), len(attempts))
	}
	for i, a := range attempts {
		if len(a.key) != 32 || a.key != attempts[0].key || a.id != r.CallID || a.n != i+1 {
			t.Errorf("attempt %d saw key %q, call %q, number %d; want one 32-digit key, call %s, number %d", i+1, a.key, a.id, a.n, r.CallID, i+1)
		}
	}
	tool.Run(context.Background(), `{"order":"A-1"}`)
	if attempts[3].key == attempts[0].key {
		t.Error("a second call sent the first call's key")
	}
}

func TestCallIDKnownSaysWhetherTheModelGaveTheID(t *testing.T) {
	var known []bool
	tool := middleware.Func("lookup", "", func(ctx context.Context, _ string) (string, error) {
		known = append(known, middleware.CallIDKnown(ctx))
		return "ok", nil
	})
	toolsafe.Wrap(tool).Run(context.Background(), `{}`)
	toolsafe.Wrap(tool, toolsafe.WithCallIDs(toolsafe.CallIDFunc(func(context.Context) string { return "call_9" }))).Run(context.Background(), `{}`)
	if len(known) != 2 || known[0] || !known[1] || middleware.CallIDKnown(context.Background()) {
		t.Errorf("known %v; want false for a made-up ID, true for the model's, false outside toolsafe", known)
	}
}
