package call_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/middleware"
)

func TestBeginMakesUpAnIDUnlessTheModelGaveOne(t *testing.T) {
	_, c := call.Begin(context.Background(), "lookup", "", "{}", nil)
	if id := c.ID(); !strings.HasPrefix(id, "call_") || len(id) != len("call_")+16 || c.IDKnown() {
		t.Errorf("ID %q, known %v; want a made-up call_ and 16 hex digits", id, c.IDKnown())
	}
	ctx, c := call.Begin(context.Background(), "lookup", "call_model", "{}", nil)
	if c.ID() != "call_model" || !c.IDKnown() || middleware.CallID(ctx) != "call_model" || call.From(ctx) != c {
		t.Errorf("ID %q, known %v, middleware.CallID %q; want the model's", c.ID(), c.IDKnown(), middleware.CallID(ctx))
	}
	if k := c.Key(); len(k) != 32 || k != c.Key() || k != middleware.IdempotencyKey(ctx) {
		t.Errorf("Key %q; want 32 hex digits, the same every time", k)
	}
}

func TestObserversLearnEventsInOrderAndTheResultHoldsThem(t *testing.T) {
	ctx, c := call.Begin(context.Background(), "lookup", "", "{}", nil)
	var seen []call.Event
	call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
		_ = c.Attempts() // outside every lock: this would deadlock inside one
		seen = append(seen, e)
	}))
	c.BeginAttempt()
	call.Record(ctx, call.RetryScheduled{Attempt: 1, Delay: 500 * time.Millisecond, Err: errors.New("reset")})
	c.BeginAttempt()
	call.Record(ctx, call.FallbackRouted{To: "search"})
	if len(seen) != 2 {
		t.Fatalf("observer saw %v; want the two events", seen)
	}
	if _, ok := seen[0].(call.RetryScheduled); !ok {
		t.Errorf("first event %T; want RetryScheduled", seen[0])
	}
	r := c.Result(ctx, "found", nil)
	if r.Attempts != 2 || len(r.Delays) != 1 || r.Delays[0] != 500*time.Millisecond || r.Fallback != "search" || r.Output != "found" {
		t.Errorf("Result %+v; want 2 attempts, one 500ms delay, the fallback named", r)
	}
}

func TestTheFirstFailureBuiltStands(t *testing.T) {
	ctx, c := call.Begin(context.Background(), "lookup", "", "{}", nil)
	first := c.Settle(ctx, middleware.NewToolError("no such ticket"))
	second := c.Settle(ctx, middleware.Transient(errors.New("reset")))
	if first != second || first.Kind != middleware.KindToolError {
		t.Errorf("settled %v then %v; want the first, tool-error, both times", first.Kind, second.Kind)
	}
	if r := c.Result(ctx, "ignored", errors.New("late")); r.Failure != first || r.Output != "" {
		t.Errorf("Result has failure %v and output %q; want the settled failure and no output", r.Failure, r.Output)
	}
}

func TestEachConcernKeepsItsOwnState(t *testing.T) {
	type gateA struct{}
	type gateB struct{}
	_, c := call.Begin(context.Background(), "refund", "", "{}", nil)
	c.SetValue(gateA{}, "approved")
	if c.Value(gateB{}) != nil || c.Value(gateA{}) != "approved" {
		t.Errorf("gate B reads %v, gate A %v; want nothing and its own", c.Value(gateB{}), c.Value(gateA{}))
	}
	var none *call.Call
	if none.Value(gateA{}) != nil || none.Self() != nil || none.ID() != "" {
		t.Error("a nil record answers as one with something in it")
	}
}

func TestFailureOfReadsTheRecordWithoutChangingIt(t *testing.T) {
	ctx, c := call.Begin(context.Background(), "refund", "", "{}", nil)
	c.BeginAttempt()
	c.MarkSideEffectUnknown()
	f := call.FailureOf(ctx, middleware.Transient(errors.New("reset")))
	if f.Attempts != 1 || f.SideEffect != middleware.SideEffectUnknown || f.Tool != "refund" {
		t.Errorf("FailureOf = %+v; want 1 attempt, side effect unknown, tool refund", f)
	}
	if r := c.Result(ctx, "done", nil); r.Failure != nil {
		t.Errorf("FailureOf settled the call: %v", r.Failure)
	}
}
