package middleware

import (
	"context"

	"github.com/toolsafe/toolsafe/internal/callkey"
)

// IdempotencyKey returns the idempotency key of the call in ctx: 32 hex
// digits, the same for every attempt of one logical call, different for
// every call. A tool with side effects sends it upstream (the
// Idempotency-Key HTTP header) so a retried request is applied once. It is
// "" when ctx carries no toolsafe call.
func IdempotencyKey(ctx context.Context) string {
	if id, ok := ctx.Value(callkey.Call{}).(identity); ok {
		return id.Key()
	}
	return ""
}

// CallID returns the ID of the call in ctx: the model's tool-call ID
// (gen_ai.tool.call.id) when known, else one made up ("call_" and 16 hex
// digits); "" when ctx carries no toolsafe call.
func CallID(ctx context.Context) string {
	if id, ok := ctx.Value(callkey.Call{}).(identity); ok {
		return id.ID()
	}
	return ""
}

// CallIDKnown reports whether CallID(ctx) is the model's or the host's
// tool-call ID (toolsafe.WithCallIDs, WithCallIDFunc, an adapter's) rather
// than one toolsafe made up; false when ctx carries no toolsafe call. A
// tool that asks an approver itself sets approval.CallInfo.CallIDKnown
// from it, so that outside a run its request is bound to its call, as the
// gate's are.
func CallIDKnown(ctx context.Context) bool {
	id, ok := ctx.Value(callkey.Call{}).(interface{ IDKnown() bool })
	return ok && id.IDKnown()
}

// AttemptNumber returns the number of the attempt running in ctx: 1 for the
// first, 2 for the first retry. It is 0 outside an attempt.
func AttemptNumber(ctx context.Context) int {
	n, _ := ctx.Value(callkey.Attempt{}).(int)
	return n
}

// identity is what a call record tells a tool about its call.
type identity interface {
	ID() string
	Key() string
}
