//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

// refusedTwice holds New and Wrap to the rule of issue 32, item 10: an
// option that would replace a guard an earlier option set is refused with
// ErrConfig, naming both options and how to fix it, in either order and
// whatever the values; with base, first alone is accepted (so it is the
// second option that is refused, not a value), and Wrap's tool answers
// every call with the same error without calling the tool.
func refusedTwice(t *testing.T, base []toolsafe.Option, first, second toolsafe.Option, names ...string) {
	t.Helper()
	var calls atomic.Int32
	tool := testkit.Counting("refund", &calls)
	if _, err := toolsafe.New(tool, append(slices.Clip(base), first)...); err != nil {
		t.Fatalf("the first option alone: %v", err)
	}
	if _, err := toolsafe.New(tool, append(slices.Clip(base), second)...); err != nil {
		t.Fatalf("the second option alone: %v", err)
	}
	for _, order := range [][]toolsafe.Option{{first, second}, {second, first}} {
		_, err := toolsafe.New(tool, append(slices.Clip(base), order...)...)
		if !errors.Is(err, toolsafe.ErrConfig) {
			t.Fatalf("New with both: %v; want ErrConfig", err)
		}
		msg := err.Error()
		for _, want := range append([]string{`tool "refund"`, "silently", "; give "}, names...) {
			if !strings.Contains(msg, want) {
				t.Errorf("New's error %q does not say %q", msg, want)
			}
		}
		if len(names) == 1 && !strings.Contains(msg, names[0]+" is given twice") {
			t.Errorf("New's error %q does not say %s is given twice", msg, names[0])
		}
		w := toolsafe.Wrap(tool, append(slices.Clip(base), order...)...)
		if !errors.Is(w.Err(), toolsafe.ErrConfig) || w.Err().Error() != msg {
			t.Errorf("Wrap's Err: %v; want New's error", w.Err())
		}
		if out, err := w.Call(context.Background(), `{"order":"A-1"}`); !errors.Is(err, toolsafe.ErrConfig) || out != "" {
			t.Errorf("a call of Wrap's tool: %q, %v; want New's error", out, err)
		}
		if r := w.Run(context.Background(), `{"order":"A-1"}`); r.Failure == nil || !errors.Is(r.Failure.Cause, toolsafe.ErrConfig) {
			t.Errorf("a Run of Wrap's tool: %+v; want New's error as its cause", r.Failure)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the tool was called %d times; a tool that cannot be wrapped is never called", n)
	}
}

// Regression (issue 32, item 10): New(tool, WithApproval(grants),
// WithApproval(approveAll)) returned no error, and the grants were never
// asked: every refund ran unapproved.
func TestASecondWithApprovalIsRefused(t *testing.T) {
	grants := approval.NewGrants()
	approveAll := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		return approval.Approved, nil
	})
	refusedTwice(t, nil, toolsafe.WithApproval(grants), toolsafe.WithApproval(approveAll), "WithApproval", "approver", "one Approver that asks them all")

	// With one WithApproval, the grants are asked: the call pauses.
	var calls atomic.Int32
	w := toolsafe.Wrap(testkit.Counting("refund", &calls), toolsafe.WithApproval(grants))
	var required *approval.Required
	if _, err := w.Call(context.Background(), "x"); !errors.As(err, &required) || calls.Load() != 0 {
		t.Fatalf("one WithApproval: %v after %d calls; want a pause, no call", err, calls.Load())
	}
}

func TestASecondWithSideEffectsIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey), toolsafe.WithSideEffects(middleware.NoSideEffects),
		"WithSideEffects", "side effects")
}

func TestASecondWithCallLimitsIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithCallLimits(run.Limits{Identical: 2, PerTool: 5}), toolsafe.WithCallLimits(run.Limits{}),
		"WithCallLimits", "loop guard", "every limit in one run.Limits")
}

func TestASecondWithTimeoutIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithTimeout(2*time.Second), toolsafe.WithTimeout(0), "WithTimeout", "attempt timeout")
}

func TestASecondWithDeadlineIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithDeadline(10*time.Second), toolsafe.WithDeadline(0), "WithDeadline", "deadline")
}

func TestASecondWithMaxAbandonedIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithMaxAbandoned(4), toolsafe.WithMaxAbandoned(10000), "WithMaxAbandoned", "abandoned")
}

func TestASecondWithRetryIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithRetry(policy.Retry{MaxRetries: 2}), toolsafe.WithRetry(policy.Retry{MaxRetries: 50}), "WithRetry", "retry policy")
}

func TestASecondArgsSchemaIsRefused(t *testing.T) {
	schema := []byte(`{"type":"object","required":["order"]}`)
	compiled, err := argschema.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("WithArgsSchema twice, the second removing the check", func(t *testing.T) {
		refusedTwice(t, nil, toolsafe.WithArgsSchema(schema), toolsafe.WithArgsSchema(nil), "WithArgsSchema", "argument schema")
	})
	t.Run("WithArgsSchema and WithArgs", func(t *testing.T) {
		refusedTwice(t, nil, toolsafe.WithArgsSchema(schema), toolsafe.WithArgs(compiled), "WithArgsSchema", "WithArgs", "are both given", "one schema, with WithArgs")
	})
	t.Run("WithArgs twice", func(t *testing.T) {
		refusedTwice(t, nil, toolsafe.WithArgs(compiled), toolsafe.WithArgs(nil), "WithArgs", "argument schema")
	})
}

func TestASecondWithCircuitBreakerIsRefused(t *testing.T) {
	shared := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 3, Delay: time.Second})
	refusedTwice(t, nil, toolsafe.WithCircuitBreaker(shared), toolsafe.WithCircuitBreaker(circuitbreaker.NewWithDefaults[string]()),
		"WithCircuitBreaker", "circuit breaker")
}

func TestASecondWithBulkheadIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithBulkhead(policy.NewBulkhead("billing", 2, 0)), toolsafe.WithBulkhead(nil), "WithBulkhead", "bulkhead")
}

func TestASecondWithRetryBudgetIsRefused(t *testing.T) {
	refusedTwice(t, nil, toolsafe.WithRetryBudget(budget.NewBuilder().WithMaxRate(0.1).Build()), toolsafe.WithRetryBudget(nil),
		"WithRetryBudget", "retry budget")
}

func TestASecondWithDestructiveIsRefused(t *testing.T) {
	refusedTwice(t, []toolsafe.Option{toolsafe.WithApproval(approval.NewGrants())}, toolsafe.WithDestructive(), toolsafe.WithDestructive(),
		"WithDestructive", "how often the approver is asked", "WithApproval(a, approval.ApproveEachAttempt)")
}

// A setting given both the one way and through the deprecated option that
// sets the same place is a guard set twice (issue 31, item 4): refused,
// naming both, in either order.
func TestASettingGivenTheOldWayAndTheNewIsRefused(t *testing.T) {
	shared := budget.NewBuilder().WithMaxRate(0.1).Build()
	t.Run("WithRetryBudget beside policy.Retry.Budget", func(t *testing.T) {
		refusedTwice(t, nil, toolsafe.WithRetryBudget(shared), toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Budget: budget.NewBuilder().Build()}),
			"WithRetryBudget", "WithRetry's policy.Retry.Budget", "are both given", "retry budget", "Budget: b")
	})
	t.Run("WithMaxAbandoned beside WithTimeout's policy.MaxAbandoned", func(t *testing.T) {
		refusedTwice(t, nil, toolsafe.WithMaxAbandoned(4), toolsafe.WithTimeout(time.Second, policy.MaxAbandoned(10000)),
			"WithMaxAbandoned", "WithTimeout's policy.MaxAbandoned", "are both given", "abandoned", "WithTimeout(d, policy.MaxAbandoned(n))")
	})
	t.Run("WithCallIDs and WithCallIDFunc set one thing, and the later wins", func(t *testing.T) {
		ids := toolsafe.NewCallIDs()
		host := func(context.Context) string { return "call_host" }
		for _, tt := range []struct {
			opts []toolsafe.Option
			want string
		}{
			{[]toolsafe.Option{toolsafe.WithCallIDs(ids), toolsafe.WithCallIDFunc(host)}, "call_host"},
			{[]toolsafe.Option{toolsafe.WithCallIDFunc(host), toolsafe.WithCallIDs(nil)}, ""},
		} {
			r := toolsafe.Wrap(testkit.Refund(new(atomic.Int32)), tt.opts...).Run(context.Background(), "x")
			if (tt.want != "" && r.CallID != tt.want) || (tt.want == "" && r.CallID == "call_host") {
				t.Errorf("call ID %q; want the later option's (%q, or a made-up one)", r.CallID, tt.want)
			}
		}
	})
	// WithDestructive needs an approver beside it, so refusedTwice's
	// "alone" runs do not apply: both orders, and the contradicting mode.
	for _, mode := range []approval.GateMode{approval.ApproveEachAttempt, approval.ApproveCall} {
		for _, order := range [][]toolsafe.Option{
			{toolsafe.WithApproval(approval.NewGrants(), mode), toolsafe.WithDestructive()},
			{toolsafe.WithDestructive(), toolsafe.WithApproval(approval.NewGrants(), mode)},
		} {
			_, err := toolsafe.New(testkit.Refund(new(atomic.Int32)), order...)
			if !errors.Is(err, toolsafe.ErrConfig) {
				t.Fatalf("WithApproval(a, %d) beside WithDestructive: %v; want ErrConfig", mode, err)
			}
			for _, want := range []string{"WithApproval's approval.GateMode", "WithDestructive", "are both given", "how often the approver is asked", "silently"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("New's error %q does not say %q", err, want)
				}
			}
		}
	}
	// The deprecated pair alone is still accepted, as it always was.
	if _, err := toolsafe.New(testkit.Refund(new(atomic.Int32)), toolsafe.WithDestructive(), toolsafe.WithApproval(approval.NewGrants())); err != nil {
		t.Errorf("WithDestructive with WithApproval(a): %v; want it accepted", err)
	}
}

func TestASecondWithFallbackIsRefused(t *testing.T) {
	var calls atomic.Int32
	refusedTwice(t, nil, toolsafe.WithFallback(fallback.To(testkit.Counting("refund_later", &calls))), toolsafe.WithFallback(fallback.To(testkit.Counting("refund_now", &calls))),
		"WithFallback", "fallback")
}

// The options that guard nothing (how calls are logged, traced and named)
// are replaced by a later one, as Option says: the later logger gets the
// call's DEBUG lines, the earlier none.
func TestOptionsThatGuardNothingAreReplacedByALaterOne(t *testing.T) {
	var first, second bytes.Buffer
	debug := func(b *bytes.Buffer) *slog.Logger {
		return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	failing := middleware.Func("refund", "", func(context.Context, string) (string, error) {
		return "", errors.New("connection reset by peer")
	})
	w, err := toolsafe.New(failing, toolsafe.WithLogger(debug(&first)), toolsafe.WithLogger(debug(&second)),
		toolsafe.WithCallIDs(toolsafe.CallIDFunc(func(context.Context) string { return "call_first" })),
		toolsafe.WithCallIDs(toolsafe.CallIDFunc(func(context.Context) string { return "call_second" })))
	if err != nil {
		t.Fatal(err)
	}
	r := w.Run(context.Background(), "x")
	if first.Len() != 0 || !strings.Contains(second.String(), "connection reset by peer") {
		t.Errorf("first logger %q, second %q; want the call's DEBUG lines in the second only", first.String(), second.String())
	}
	if r.CallID != "call_second" {
		t.Errorf("call ID %q; want the later WithCallIDs'", r.CallID)
	}
}

// Every option's doc says what a second one does, and Option's doc lists
// the options that set a guard once: a new option cannot be added without
// saying which rule it follows. The options are the root package's, one
// directory up.
func TestEveryOptionSaysWhatASecondOneDoes(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var optionDoc string
	docs := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				res := d.Type.Results
				if d.Recv != nil || !d.Name.IsExported() || res == nil || len(res.List) != 1 {
					continue
				}
				if id, ok := res.List[0].Type.(*ast.Ident); ok && id.Name == "Option" {
					docs[d.Name.Name] = strings.Join(strings.Fields(d.Doc.Text()), " ")
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "Option" {
						optionDoc = strings.Join(strings.Fields(d.Doc.Text()), " ")
					}
				}
			}
		}
	}
	if len(docs) < 20 {
		t.Fatalf("found %d options; the parse missed some", len(docs))
	}
	adds := []string{"With", "WithPolicies", "WithOnResult"}
	for name, doc := range docs {
		if !strings.Contains(optionDoc, name+",") && !strings.Contains(optionDoc, name+" ") {
			t.Errorf("Option's doc does not name %s", name)
		}
		switch {
		case slices.Contains(adds, name):
		case strings.Contains(doc, "replaces an earlier one"):
		case strings.Contains(doc, "New refuses") || strings.Contains(doc, "refused by New"):
			if !strings.Contains(doc, "ErrConfig") {
				t.Errorf("%s's doc says New refuses a second but not with ErrConfig: %s", name, doc)
			}
		default:
			t.Errorf("%s's doc does not say what a second %s does (refused by New, or replaces an earlier one): %s", name, name, doc)
		}
	}
}
