//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// Each setting has one way (issue 31, item 4), and the deprecated option
// that was a second way sets the same place: a user sees the same
// behaviour through either.
func TestEachSettingHasOneWayAndTheDeprecatedOptionDoesTheSame(t *testing.T) {
	schema := []byte(`{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`)
	compiled, err := argschema.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	type idKey struct{}
	fromHost := func(ctx context.Context) string { id, _ := ctx.Value(idKey{}).(string); return id }
	retry := policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0)}

	tests := []struct {
		name string
		// opts makes the options, the new way or the deprecated one.
		opts func(b budget.Budget) (oneWay, deprecated []toolsafe.Option)
		// check runs a call the way a user would and says what it saw.
		check func(t *testing.T, opts []toolsafe.Option, b budget.Budget)
	}{
		{
			name: "the retry budget, on policy.Retry.Budget (was WithRetryBudget)",
			opts: func(b budget.Budget) ([]toolsafe.Option, []toolsafe.Option) {
				with := retry
				with.Budget = b
				return []toolsafe.Option{toolsafe.WithRetry(with)}, []toolsafe.Option{toolsafe.WithRetry(retry), toolsafe.WithRetryBudget(b)}
			},
			check: func(t *testing.T, opts []toolsafe.Option, b budget.Budget) {
				// A retry of one call holds the budget; another call's
				// retry is then refused.
				held, release := make(chan struct{}), make(chan struct{})
				var n atomic.Int32
				holder := toolsafe.Wrap(middleware.Func("get_item", "", func(context.Context, string) (string, error) {
					if n.Add(1) == 2 {
						close(held)
						<-release
						return "item", nil
					}
					return "", middleware.Transient(errors.New("reset"))
				}), opts...)
				done := make(chan middleware.Result)
				go func() { done <- holder.Run(context.Background(), "x") }()
				<-held
				var calls atomic.Int32
				r := toolsafe.Wrap(middleware.Func("get_item", "", func(context.Context, string) (string, error) {
					calls.Add(1)
					return "", middleware.Transient(errors.New("reset"))
				}), opts...).Run(context.Background(), "x")
				close(release)
				if held := <-done; held.Status() != "ok" {
					t.Errorf("the call that held the budget: %q; want ok", held.Status())
				}
				if r.Kind() != middleware.KindBudget || calls.Load() != 1 {
					t.Errorf("%v after %d attempts; want budget-exceeded after 1", r.Kind(), calls.Load())
				}
			},
		},
		{
			name: "the cap on abandoned attempts, with WithTimeout (was WithMaxAbandoned)",
			opts: func(budget.Budget) ([]toolsafe.Option, []toolsafe.Option) {
				return []toolsafe.Option{toolsafe.WithTimeout(time.Millisecond, policy.MaxAbandoned(2))},
					[]toolsafe.Option{toolsafe.WithTimeout(time.Millisecond), toolsafe.WithMaxAbandoned(2)}
			},
			check: func(t *testing.T, opts []toolsafe.Option, _ budget.Budget) {
				release := make(chan struct{})
				defer close(release)
				var started atomic.Int32
				tool := toolsafe.Wrap(middleware.Func("stuck", "", func(context.Context, string) (string, error) {
					started.Add(1)
					<-release
					return "", nil
				}), opts...)
				busy := 0
				for range 5 {
					if tool.Run(context.Background(), "x").Kind() == middleware.KindBusy {
						busy++
					}
				}
				if started.Load() != 2 || busy != 3 {
					t.Errorf("%d attempts started, %d refused with tool-busy; want 2 and 3", started.Load(), busy)
				}
			},
		},
		{
			name: "a destructive tool, with WithApproval (was WithDestructive)",
			opts: func(budget.Budget) ([]toolsafe.Option, []toolsafe.Option) {
				// Approves the first attempt of each call, and no other.
				first := approval.ApproverFunc(func(_ context.Context, c approval.CallInfo) (approval.Decision, error) {
					if c.Attempt == 1 {
						return approval.Approved, nil
					}
					return approval.Pending, nil
				})
				return []toolsafe.Option{toolsafe.WithApproval(first, approval.ApproveEachAttempt), toolsafe.WithRetry(retry)},
					[]toolsafe.Option{toolsafe.WithApproval(first), toolsafe.WithDestructive(), toolsafe.WithRetry(retry)}
			},
			check: func(t *testing.T, opts []toolsafe.Option, _ budget.Budget) {
				var calls atomic.Int32
				failing := middleware.Func("refund", "", func(context.Context, string) (string, error) {
					calls.Add(1)
					return "", middleware.Transient(errors.New("reset"))
				})
				// Without WithSideEffects it has side effects without a
				// key: an attempt that may have landed is not retried.
				if r := toolsafe.Wrap(failing, opts...).Run(context.Background(), `{"order":"A-1"}`); r.Attempts != 1 || calls.Load() != 1 {
					t.Errorf("%q after %d attempts; want 1, not retried: a destructive tool has side effects", r.Status(), r.Attempts)
				}
				// With a key, the retry pauses for an approval of its own.
				calls.Store(0)
				keyed := toolsafe.Wrap(failing, append(opts, toolsafe.WithSideEffects(middleware.SideEffectsWithKey))...)
				_, err := keyed.Call(context.Background(), `{"order":"A-1"}`)
				var required *approval.Required
				if !errors.As(err, &required) || calls.Load() != 1 || required.Attempt != 2 {
					t.Errorf("%v after %d calls; want a pause for attempt 2, after 1", err, calls.Load())
				}
			},
		},
		{
			name: "the argument schema, with WithArgs (was WithArgsSchema)",
			opts: func(budget.Budget) ([]toolsafe.Option, []toolsafe.Option) {
				return []toolsafe.Option{toolsafe.WithArgs(compiled)}, []toolsafe.Option{toolsafe.WithArgsSchema(schema)}
			},
			check: func(t *testing.T, opts []toolsafe.Option, _ budget.Budget) {
				var calls atomic.Int32
				tool := toolsafe.Wrap(testkit.Counting("refund", &calls), opts...)
				r := tool.Run(context.Background(), `{"id":"A-1"}`)
				if r.Kind() != middleware.KindArgsInvalid || calls.Load() != 0 || !strings.Contains(r.Observation(), "order") {
					t.Errorf("%v after %d calls: %q; want args-invalid naming order, no call", r.Kind(), calls.Load(), r.Observation())
				}
				if got := string(tool.ArgsSchema()); !strings.Contains(got, `"required":["order"]`) {
					t.Errorf("ArgsSchema %s; want the schema given", got)
				}
			},
		},
		{
			name: "call IDs from the host's context, with WithCallIDs (was WithCallIDFunc)",
			opts: func(budget.Budget) ([]toolsafe.Option, []toolsafe.Option) {
				return []toolsafe.Option{toolsafe.WithCallIDs(toolsafe.CallIDFunc(fromHost))}, []toolsafe.Option{toolsafe.WithCallIDFunc(fromHost)}
			},
			check: func(t *testing.T, opts []toolsafe.Option, _ budget.Budget) {
				tool := toolsafe.Wrap(middleware.Func("lookup", "", func(ctx context.Context, _ string) (string, error) {
					return middleware.CallID(ctx), nil
				}), opts...)
				r := tool.Run(context.WithValue(context.Background(), idKey{}, "call_from_host"), "{}")
				if r.CallID != "call_from_host" || r.Output != "call_from_host" {
					t.Errorf("Result.CallID %q, the tool saw %q; want call_from_host for both", r.CallID, r.Output)
				}
				if r := tool.Run(context.Background(), "{}"); !strings.HasPrefix(r.CallID, "call_") || r.CallID == "call_from_host" {
					t.Errorf("without an ID in the context, Result.CallID = %q; want a made-up call_ ID", r.CallID)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, way := range []string{"the one way", "the deprecated option"} {
				t.Run(way, func(t *testing.T) {
					b := budget.NewBuilder().WithMaxRate(0.0001).WithMinConcurrency(0).Build()
					oneWay, deprecated := tt.opts(b)
					opts := oneWay
					if way == "the deprecated option" {
						opts = deprecated
					}
					if _, err := toolsafe.New(middleware.Func("x", "", func(context.Context, string) (string, error) { return "", nil }), opts...); err != nil {
						t.Fatalf("New: %v", err)
					}
					tt.check(t, opts, b)
				})
			}
		})
	}
}

// A companion given beside its guard is checked as a guard is: more than
// one, or a bad value, is a configuration error that says how to fix it.
func TestACompanionOfAGuardIsCheckedWithIt(t *testing.T) {
	g := approval.NewGrants()
	tests := []struct {
		name string
		opts []toolsafe.Option
		says string
	}{
		{"two gate modes", []toolsafe.Option{toolsafe.WithApproval(g, approval.ApproveCall, approval.ApproveEachAttempt)}, "WithApproval takes one approval.GateMode, not 2"},
		{"an unknown gate mode", []toolsafe.Option{toolsafe.WithApproval(g, approval.GateMode(7))}, "approval gate mode 7 is unknown"},
		{"two caps", []toolsafe.Option{toolsafe.WithTimeout(time.Second, 4, 8)}, "WithTimeout takes one policy.MaxAbandoned, not 2"},
		{"a negative cap", []toolsafe.Option{toolsafe.WithTimeout(time.Second, policy.MaxAbandoned(-1))}, "max abandoned -1 is negative: use 0 for the default of 64"},
		{"a negative cap, the deprecated way", []toolsafe.Option{toolsafe.WithTimeout(time.Second), toolsafe.WithMaxAbandoned(-1)}, "max abandoned -1 is negative: use 0 for the default of 64"},
		{"an invalid schema, the deprecated way", []toolsafe.Option{toolsafe.WithArgsSchema([]byte(`{"type":`))}, "args schema:"},
		{"destructive without an approver, the deprecated way", []toolsafe.Option{toolsafe.WithDestructive()}, "add WithApproval(a, approval.ApproveEachAttempt)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolsafe.New(testkit.Refund(new(atomic.Int32)), tt.opts...)
			if !errors.Is(err, toolsafe.ErrConfig) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("New: %v; want ErrConfig saying %q", err, tt.says)
			}
		})
	}
	// Zero is the default, not an error, and a nil source names no call.
	if _, err := toolsafe.New(testkit.Refund(new(atomic.Int32)), toolsafe.WithTimeout(time.Second, 0), toolsafe.WithApproval(g, approval.ApproveCall),
		toolsafe.WithCallIDs((*toolsafe.CallIDs)(nil))); err != nil {
		t.Errorf("New with a zero cap, ApproveCall and a nil *CallIDs: %v; want none", err)
	}
	var nilFunc toolsafe.CallIDFunc
	if r := toolsafe.Wrap(testkit.Refund(new(atomic.Int32)), toolsafe.WithCallIDs(nilFunc)).Run(context.Background(), "x"); !strings.HasPrefix(r.CallID, "call_") {
		t.Errorf("a nil CallIDFunc: call ID %q; want a made-up one", r.CallID)
	}
}
