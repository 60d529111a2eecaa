package temporaltools

import (
	"context"
	"errors"
	"github.com/toolsafe/toolsafe/argschema"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// crossing is what one activity attempt gave Temporal.
type crossing struct {
	result outcome // when err is nil
	err    error
	app    *temporal.ApplicationError
	detail outcome // app's details
}

// attemptOnce runs one attempt of t's activity with in, in the SDK's
// activity test environment.
func attemptOnce(t *testing.T, tool *Tool, in callInput) crossing {
	t.Helper()
	s := suite()
	env := s.NewTestActivityEnvironment()
	if err := Register(env, tool); err != nil {
		t.Fatal(err)
	}
	val, err := env.ExecuteActivity(ActivityName(tool.Name()), in)
	var c crossing
	if err != nil {
		c.err = err
		if !errors.As(err, &c.app) {
			t.Fatalf("the activity failed with %T, not an ApplicationError: %v", err, err)
		}
		if err := c.app.Details(&c.detail); err != nil {
			t.Fatalf("the error's details: %v", err)
		}
		return c
	}
	if err := val.Get(&c.result); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEveryKindCrossesIntoTemporalAsTheTableSays(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	in := callInput{Input: `{"number":"INV-1"}`, CallID: "c1", RunID: "run-1"}
	foreign := []string{"reset by peer", "connection reset", "boom-value", "upstream says"}
	covered := map[middleware.Kind]bool{}

	type want struct {
		status       string // the result's; "" for an error
		nonRetryable bool
		delay        time.Duration // NextRetryDelay; -1: any positive
		message      string        // a part of the model's message
	}
	check := func(t *testing.T, kind middleware.Kind, c crossing, w want) {
		t.Helper()
		covered[kind] = true
		o := c.result
		if w.status == "" {
			if c.app == nil {
				t.Fatalf("the activity returned %s, want an ApplicationError", show(c.result))
			}
			if c.app.Type() != string(kind) || c.app.NonRetryable() != w.nonRetryable {
				t.Fatalf("ApplicationError type %q non-retryable %v, want %q %v", c.app.Type(), c.app.NonRetryable(), kind, w.nonRetryable)
			}
			switch d := c.app.NextRetryDelay(); {
			case w.delay < 0 && d <= 0, w.delay >= 0 && d != w.delay:
				t.Fatalf("NextRetryDelay %v, want %v", d, w.delay)
			}
			if c.app.Message() != c.detail.Message {
				t.Fatalf("the error's message %q is not the model's %q", c.app.Message(), c.detail.Message)
			}
			o = c.detail
		} else if c.err != nil {
			t.Fatalf("the activity failed: %v, want the result %s", c.err, w.status)
		} else if o.Status != w.status {
			t.Fatalf("status %q, want %q: %s", o.Status, w.status, show(o))
		}
		if o.Kind != kind && !(kind == "" && w.status == statusOK) {
			t.Fatalf("kind %q, want %q", o.Kind, kind)
		}
		if !strings.Contains(o.Message+o.Output, w.message) {
			t.Fatalf("the message %q does not say %q", o.Message, w.message)
		}
		for _, f := range foreign {
			if c.err != nil && strings.Contains(c.err.Error(), f) || strings.Contains(o.Message, f) {
				t.Fatalf("a foreign text %q crossed into Temporal: %v / %q", f, c.err, o.Message)
			}
		}
	}

	t.Run("an answer is the result", func(t *testing.T) {
		c := attemptOnce(t, mustNew(t, fetchTool(up.URL())), in)
		check(t, "", c, want{status: statusOK, message: "INV-1"})
	})
	t.Run("tool-error is the result, for the model, verbatim", func(t *testing.T) {
		tool := mustNew(t, middleware.Func("fetch", "d", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("invoice INV-9 does not exist; check the number with the user.")
		}))
		check(t, middleware.KindToolError, attemptOnce(t, tool, in), want{status: statusError, message: "invoice INV-9 does not exist; check the number with the user."})
	})
	t.Run("args-invalid is the result, no request made", func(t *testing.T) {
		before := up.Requests("/invoices")
		schema, err := argschema.Compile([]byte(`{"type":"object","required":["number"],"properties":{"number":{"type":"string"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		tool := mustNew(t, fetchTool(up.URL()), toolsafe.WithArgs(schema))
		check(t, middleware.KindArgsInvalid, attemptOnce(t, tool, callInput{Input: `{}`, CallID: "c1", RunID: "run-1"}), want{status: statusError, message: "number"})
		if n := up.Requests("/invoices") - before; n != 0 {
			t.Fatalf("the upstream got %d requests for invalid arguments", n)
		}
	})
	t.Run("approval-denied is the result", func(t *testing.T) {
		deny := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) { return approval.Denied, nil })
		tool := mustNew(t, fetchTool(up.URL()), toolsafe.WithApproval(Decisions(deny)))
		check(t, middleware.KindApprovalDenied, attemptOnce(t, tool, in), want{status: statusError, message: "denied"})
	})
	t.Run("call-limit is the result, from the workflow's counts", func(t *testing.T) {
		before := up.Requests("/invoices")
		tool := mustNew(t, fetchTool(up.URL()), toolsafe.WithCallLimits(run.Limits{PerTool: 2}))
		limited := in
		limited.Counts = run.Counts{Total: 2, Tool: 2}
		check(t, middleware.KindCallLimit, attemptOnce(t, tool, limited), want{status: statusError, message: "fetch was not called"})
		if n := up.Requests("/invoices") - before; n != 0 {
			t.Fatalf("the upstream got %d requests past the limit", n)
		}
	})
	t.Run("approval-required is the result, paused, with the call to show", func(t *testing.T) {
		tool := mustNew(t, fetchTool(up.URL()), toolsafe.WithApproval(Decisions(nil)))
		c := attemptOnce(t, tool, callInput{Input: `{ "number" : "INV-1" }`, CallID: "c1", RunID: "run-1"})
		covered[middleware.KindApprovalRequired] = true
		p := c.result.Pause
		if c.err != nil || c.result.Status != statusPaused || p == nil {
			t.Fatalf("got %s, %v; want a pause", show(c.result), c.err)
		}
		if p.Call.Tool != "fetch" || p.Call.CanonicalInput != `{"number":"INV-1"}` || p.Call.RunID != "run-1" || p.Call.CallID != "c1" ||
			p.Call.IdempotencyKey == "" || p.Call.IdempotencyKey != c.result.Key || p.Call.Attempt != 1 {
			t.Fatalf("the pause shows %s", show(p))
		}
	})
	t.Run("tool-failed of a transient cause is retryable, its reason in toolsafe's words", func(t *testing.T) {
		up.Enqueue("/invoices", toolsafetest.Reset())
		check(t, middleware.KindFailed, attemptOnce(t, mustNew(t, fetchTool(up.URL())), in), want{message: "the connection was reset"})
	})
	t.Run("Retry-After is the NextRetryDelay", func(t *testing.T) {
		up.Enqueue("/invoices", toolsafetest.TooMany("7"))
		check(t, middleware.KindFailed, attemptOnce(t, mustNew(t, fetchTool(up.URL())), in), want{delay: 7 * time.Second, message: "HTTP 429"})
	})
	t.Run("tool-timeout of the hard attempt timeout is retryable", func(t *testing.T) {
		up.Enqueue("/invoices", toolsafetest.Hang())
		defer up.Release()
		check(t, middleware.KindTimeout, attemptOnce(t, mustNew(t, fetchTool(up.URL()), toolsafe.WithTimeout(50*time.Millisecond)), in), want{message: "did not answer within 50ms"})
	})
	t.Run("circuit-open is retryable after the time the breaker has left", func(t *testing.T) {
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Minute})
		tool := mustNew(t, fetchTool(up.URL()), toolsafe.WithCircuitBreaker(cb))
		up.Enqueue("/invoices", toolsafetest.Reset())
		attemptOnce(t, tool, in) // opens it
		c := attemptOnce(t, tool, in)
		check(t, middleware.KindCircuitOpen, c, want{delay: -1, message: "its dependency billing is down"})
		if d := c.app.NextRetryDelay(); d > time.Minute {
			t.Fatalf("NextRetryDelay %v is longer than the breaker's delay", d)
		}
	})
	t.Run("tool-busy is retryable", func(t *testing.T) {
		b := policy.NewBulkhead("billing", 1, 0)
		entered, release := make(chan struct{}), make(chan struct{})
		hold := mustNew(t, middleware.Func("hold", "d", func(context.Context, string) (string, error) {
			close(entered)
			<-release
			return "held", nil
		}), toolsafe.WithBulkhead(b))
		done := make(chan crossing)
		go func() { done <- attemptOnce(t, hold, in) }()
		<-entered
		c := attemptOnce(t, mustNew(t, fetchTool(up.URL()), toolsafe.WithBulkhead(b)), in)
		close(release)
		<-done
		check(t, middleware.KindBusy, c, want{message: "too many calls to its dependency billing are in flight"})
	})
	t.Run("budget-exceeded is retryable", func(t *testing.T) {
		spent := budget.NewBuilder().WithMaxRate(0).WithMinConcurrency(0).Build()
		retrying, release := make(chan struct{}), make(chan struct{})
		var n atomic.Int32
		hold := mustNew(t, middleware.Func("hold", "d", func(context.Context, string) (string, error) {
			if n.Add(1) == 1 {
				return "", syscall.ECONNRESET
			}
			close(retrying) // a retry in flight: the budget's share is spent
			<-release
			return "held", nil
		}), RetryInActivity(policy.Retry{MaxRetries: 1, Backoff: policy.Constant(0), Budget: spent}))
		done := make(chan crossing)
		go func() { done <- attemptOnce(t, hold, in) }()
		<-retrying
		up.Enqueue("/invoices", toolsafetest.Reset())
		tool := mustNew(t, fetchTool(up.URL()), RetryInActivity(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0), Budget: spent}))
		c := attemptOnce(t, tool, in)
		close(release)
		<-done
		check(t, middleware.KindBudget, c, want{message: "retries are being held back"})
	})
	t.Run("tool-panic is not retryable, and its value stays out", func(t *testing.T) {
		tool := mustNew(t, middleware.Func("fetch", "d", func(context.Context, string) (string, error) { panic("boom-value") }))
		check(t, middleware.KindPanic, attemptOnce(t, tool, in), want{nonRetryable: true, message: "failed internally"})
	})
	t.Run("a Permanent tool-failed is not retryable", func(t *testing.T) {
		tool := mustNew(t, middleware.Func("fetch", "d", func(context.Context, string) (string, error) {
			return "", middleware.Permanent(errors.New("upstream says no, forever"))
		}))
		check(t, middleware.KindFailed, attemptOnce(t, tool, in), want{nonRetryable: true, message: "Do not call fetch again"})
	})
	t.Run("an attempt of a tool without keys that may have been applied is not retryable", func(t *testing.T) {
		var u refunds
		rup := toolsafetest.NewUpstream(&u)
		defer rup.Close()
		rup.Enqueue("/refunds", toolsafetest.ApplyThenReset())
		tool := mustNew(t, refundTool(rup.URL()), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		c := attemptOnce(t, tool, in)
		check(t, middleware.KindFailed, c, want{nonRetryable: true, message: "may have been applied"})
		if !c.detail.SideEffectUnknown {
			t.Fatal("the details do not say the side effect is unknown")
		}
	})
	t.Run("canceled is the context's error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := settle(ctx, &attempt{temporal: 1}, &callLedger{}, middleware.Result{Failure: &middleware.Failure{Kind: middleware.KindCanceled}})
		covered[middleware.KindCanceled] = true
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})

	for _, k := range middleware.Kinds() {
		if !covered[k] {
			t.Errorf("the kind %q has no case here: say how it crosses into Temporal (dispositionOf) and add one", k)
		}
	}
}
