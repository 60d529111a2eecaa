package otelhook_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

func TestTracingOfTheReferenceScenario(t *testing.T) {
	const invoice = `{"number":"INV-1001"}`
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)})

	t.Run("success first time is one call span with one attempt and no error", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, _ := testkit.Billing(t, retry, toolsafe.WithTracing(tm.Hook))
		if r := tool.Run(context.Background(), invoice); r.Status() != "ok" {
			t.Fatalf("status %q: %s", r.Status(), r.Observation())
		}
		call, attempts := callSpan(t, tm)
		if call.Name() != "execute_tool fetch_invoice" || call.SpanKind() != trace.SpanKindInternal {
			t.Errorf("call span %q kind %v; want \"execute_tool fetch_invoice\" INTERNAL", call.Name(), call.SpanKind())
		}
		if call.InstrumentationScope().Name != otelhook.ScopeName {
			t.Errorf("scope %q; want %q", call.InstrumentationScope().Name, otelhook.ScopeName)
		}
		wantAttrs(t, "call span", call.Attributes(),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			keyToolName.String("fetch_invoice"),
			attribute.String("gen_ai.tool.type", "function"),
			attribute.String("gen_ai.tool.description", tool.Description()),
			otelhook.AttemptsKey.Int(1),
			otelhook.AbandonedKey.Int(0),
			otelhook.SummaryKey.String("ok after 1 attempt"))
		noAttrs(t, "call span", call.Attributes(), keyErrorType, keyCallID, keyArguments, keyResult)
		if call.Status().Code != codes.Unset || len(call.Events()) != 0 {
			t.Errorf("status %v, events %v; want Unset and none", call.Status(), eventNames(call))
		}
		checkAttempts(t, call, attempts, 1)
		noAttrs(t, "attempt 1", attempts[0].Attributes(), keyErrorType, otelhook.RetryableKey)
		if attempts[0].Status().Code != codes.Unset {
			t.Errorf("attempt 1 status %v; want Unset", attempts[0].Status())
		}
	})

	t.Run("success after retries has an attempt span per attempt and a retry event per wait", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, srv := testkit.Billing(t, retry, toolsafe.WithTracing(tm.Hook))
		srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Unavailable(""), toolsafetest.Reset())
		if r := tool.Run(context.Background(), invoice); r.Status() != "ok" || r.Attempts != 4 {
			t.Fatalf("status %q after %d attempts", r.Status(), r.Attempts)
		}
		call, attempts := callSpan(t, tm)
		wantAttrs(t, "call span", call.Attributes(),
			otelhook.AttemptsKey.Int(4), otelhook.SummaryKey.String("ok after 4 attempts"))
		noAttrs(t, "call span", call.Attributes(), keyErrorType)
		if call.Status().Code != codes.Unset {
			t.Errorf("call status %v; want Unset", call.Status())
		}
		checkAttempts(t, call, attempts, 4)
		reasons := []string{"the connection was reset", "HTTP 503 Service Unavailable", "the connection was reset"}
		for i, a := range attempts[:3] {
			wantAttrs(t, a.Name(), a.Attributes(),
				keyErrorType.String("tool-failed"), otelhook.RetryableKey.Bool(true), otelhook.ReasonKey.String(reasons[i]))
			if a.Status().Code != codes.Error || a.Status().Description != "tool-failed" {
				t.Errorf("%s status %v; want Error tool-failed", a.Name(), a.Status())
			}
		}
		noAttrs(t, "attempt 4", attempts[3].Attributes(), keyErrorType)

		events := call.Events()
		if got := eventNames(call); !slices.Equal(got, []string{"retry", "retry", "retry"}) {
			t.Fatalf("events %v; want 3 retries", got)
		}
		wantDelays := []float64{0.001, 0.002, 0.004}
		for i, e := range events {
			wantAttrs(t, fmt.Sprintf("retry event %d", i+1), e.Attributes,
				otelhook.AttemptKey.Int(i+1), otelhook.DelayKey.Float64(wantDelays[i]), keyErrorType.String("tool-failed"))
			// The event is between the failed attempt and the next one.
			if e.Time.Before(attempts[i].EndTime()) || e.Time.After(attempts[i+1].StartTime()) {
				t.Errorf("retry event %d at %v is not between attempt %d's end and attempt %d's start", i+1, e.Time, i+1, i+2)
			}
		}
	})

	t.Run("exhaustion is a failed call span with error.type tool-failed", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, srv := testkit.Billing(t, retry, toolsafe.WithTracing(tm.Hook))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())
		r := tool.Run(context.Background(), invoice)
		if r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
			t.Fatalf("got %v; want tool-failed", r.Failure)
		}
		call, attempts := callSpan(t, tm)
		wantAttrs(t, "call span", call.Attributes(),
			keyErrorType.String("tool-failed"),
			otelhook.AttemptsKey.Int(4),
			otelhook.RetryableKey.Bool(false),
			otelhook.SummaryKey.String(r.Observation()))
		if call.Status().Code != codes.Error || call.Status().Description != r.Observation() {
			t.Errorf("call status %v; want Error with the model-facing message", call.Status())
		}
		if !strings.Contains(r.Observation(), "4 attempts") {
			t.Errorf("summary %q does not name the attempts", r.Observation())
		}
		if got := eventNames(call); !slices.Equal(got, []string{"retry", "retry", "retry"}) {
			t.Errorf("events %v; want 3 retries", got)
		}
		checkAttempts(t, call, attempts, 4)
		for _, a := range attempts {
			wantAttrs(t, a.Name(), a.Attributes(), keyErrorType.String("tool-failed"), otelhook.ReasonKey.String("the connection was reset"))
		}
	})

	t.Run("a tool-error is one failed attempt, not retried", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, _ := testkit.Billing(t, retry, toolsafe.WithTracing(tm.Hook))
		r := tool.Run(context.Background(), `{"number":"7"}`)
		if r.Failure == nil || r.Failure.Kind != middleware.KindToolError {
			t.Fatalf("got %v; want tool-error", r.Failure)
		}
		call, attempts := callSpan(t, tm)
		wantAttrs(t, "call span", call.Attributes(),
			keyErrorType.String("tool-error"), otelhook.AttemptsKey.Int(1), otelhook.SummaryKey.String(r.Observation()))
		if call.Status().Code != codes.Error || len(call.Events()) != 0 {
			t.Errorf("status %v events %v; want Error and no event", call.Status(), eventNames(call))
		}
		checkAttempts(t, call, attempts, 1)
		wantAttrs(t, "attempt 1", attempts[0].Attributes(),
			keyErrorType.String("tool-error"), otelhook.RetryableKey.Bool(false))
	})

	t.Run("an attempt timeout is tool-timeout on each attempt and on the call", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithTimeout(50*time.Millisecond),
			toolsafe.WithTracing(tm.Hook))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Hang())
		r := tool.Run(context.Background(), invoice)
		if r.Failure == nil || r.Failure.Kind != middleware.KindTimeout || r.Attempts != 2 {
			t.Fatalf("got %v after %d attempts; want tool-timeout after 2", r.Failure, r.Attempts)
		}
		call, attempts := callSpan(t, tm)
		wantAttrs(t, "call span", call.Attributes(),
			keyErrorType.String("tool-timeout"), otelhook.AttemptsKey.Int(2), otelhook.SummaryKey.String(r.Observation()))
		if call.Status().Code != codes.Error {
			t.Errorf("call status %v; want Error", call.Status())
		}
		if got := eventNames(call); !slices.Equal(got, []string{"retry"}) {
			t.Errorf("events %v; want 1 retry", got)
		}
		wantAttrs(t, "retry event", call.Events()[0].Attributes, keyErrorType.String("tool-timeout"))
		checkAttempts(t, call, attempts, 2)
		for _, a := range attempts {
			wantAttrs(t, a.Name(), a.Attributes(), keyErrorType.String("tool-timeout"), otelhook.RetryableKey.Bool(true))
		}
	})
}

func TestTracingOfAnAbandonedAttempt(t *testing.T) {
	tm := testkit.NewRecorder(t)
	release := make(chan struct{})
	finished := make(chan struct{})
	// The test's observer is added inside the call span's, so it runs after
	// the hook has counted the abandoned attempt down.
	done := toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			call.Observe(ctx, call.ObserverFunc(func(e call.Event) {
				if _, ok := e.(call.AbandonedReturned); ok {
					close(finished)
				}
			}))
			return next.Call(ctx, input)
		})
	})
	tool := toolsafe.Wrap(testkit.Stuck(release, nil), toolsafe.WithTimeout(20*time.Millisecond), toolsafe.WithTracing(tm.Hook), done)

	r := tool.Run(context.Background(), "x")
	if r.Failure == nil || r.Failure.Kind != middleware.KindTimeout || r.Abandoned != 1 {
		t.Fatalf("got %v, abandoned %d; want tool-timeout, 1", r.Failure, r.Abandoned)
	}
	// The call has returned: both spans have ended, though the tool runs on.
	call, attempts := callSpan(t, tm)
	wantAttrs(t, "call span", call.Attributes(), otelhook.AbandonedKey.Int(1), keyErrorType.String("tool-timeout"))
	checkAttempts(t, call, attempts, 1)
	wantAttrs(t, "attempt 1", attempts[0].Attributes(),
		otelhook.AttemptAbandonedKey.Bool(true), keyErrorType.String("tool-timeout"))
	if attempts[0].EndTime().After(call.EndTime()) {
		t.Errorf("the abandoned attempt's span ends after the call span")
	}
	if got := sumOf(t, tm, "toolsafe.tool.abandoned_attempts", keyToolName.String("stuck")); got != 1 {
		t.Errorf("abandoned attempts in flight %d; want 1", got)
	}

	close(release)
	<-finished
	if got := sumOf(t, tm, "toolsafe.tool.abandoned_attempts", keyToolName.String("stuck")); got != 0 {
		t.Errorf("abandoned attempts in flight after the tool returned %d; want 0", got)
	}
}

// pausing is a tool that asks for approval: the run must pause.
func pausing() tools.Tool {
	return middleware.Func("refund", "Refunds an invoice.", func(ctx context.Context, input string) (string, error) {
		return "", &approval.Required{Tool: "refund", CallID: middleware.CallID(ctx), Input: input, Reason: "refunds need a human"}
	})
}

func TestTracingOfAPauseAndACancellation(t *testing.T) {
	t.Run("an approval pause is not an error: status Unset and an approval_required event", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool := toolsafe.Wrap(pausing(), toolsafe.WithRetry(policy.Retry{MaxRetries: 3}), toolsafe.WithTracing(tm.Hook))
		_, err := tool.Call(context.Background(), `{"number":"INV-1001"}`)
		var ar *approval.Required
		if !errors.As(err, &ar) {
			t.Fatalf("err %v; want *ApprovalRequired", err)
		}
		call, attempts := callSpan(t, tm)
		if call.Status().Code != codes.Unset || !slices.Equal(eventNames(call), []string{"approval_required"}) {
			t.Errorf("status %v events %v; want Unset and approval_required", call.Status(), eventNames(call))
		}
		noAttrs(t, "call span", call.Attributes(), keyErrorType)
		wantAttrs(t, "call span", call.Attributes(), otelhook.SummaryKey.String("refund is waiting for a human's approval."))
		checkAttempts(t, call, attempts, 1)
		if attempts[0].Status().Code != codes.Unset {
			t.Errorf("attempt status %v; want Unset", attempts[0].Status())
		}
		noAttrs(t, "attempt 1", attempts[0].Attributes(), keyErrorType)
		if got := sumOf(t, tm, "toolsafe.tool.calls", keyToolName.String("refund"), otelhook.OutcomeKey.String("approval-required")); got != 1 {
			t.Errorf("calls with outcome approval-required: %d; want 1", got)
		}
	})

	t.Run("the caller's cancellation is not an error: status Unset and a canceled event", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		release := make(chan struct{})
		defer close(release)
		started := make(chan struct{}, 1)
		tool := toolsafe.Wrap(testkit.Stuck(release, started), toolsafe.WithTracing(tm.Hook))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-started
			cancel()
		}()
		if _, err := tool.Call(ctx, "x"); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v; want context.Canceled", err)
		}
		call, attempts := callSpan(t, tm)
		if call.Status().Code != codes.Unset || !slices.Equal(eventNames(call), []string{"canceled"}) {
			t.Errorf("status %v events %v; want Unset and canceled", call.Status(), eventNames(call))
		}
		wantAttrs(t, "canceled event", call.Events()[0].Attributes, otelhook.CancelCauseKey.String("canceled"))
		noAttrs(t, "call span", call.Attributes(), keyErrorType)
		checkAttempts(t, call, attempts, 1)
		wantAttrs(t, "attempt 1", attempts[0].Attributes(), keyErrorType.String("canceled"), otelhook.RetryableKey.Bool(false))
	})
}

// A fallback layer made here, standing in for package fallback: on failure
// it routes to alt, on the primary's context, and records it.
func routeTo(alt tools.Tool) toolsafe.Option {
	return toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			out, err := next.Call(ctx, input)
			if err == nil {
				return out, nil
			}
			call.Record(ctx, call.FallbackRouted{To: alt.Name()})
			return alt.Call(ctx, input)
		})
	})
}

func TestTracingOfAFallbackAndABreaker(t *testing.T) {
	tm := testkit.NewRecorder(t)
	archive := toolsafe.Wrap(middleware.Func("search_archive", "Searches the archive.", func(context.Context, string) (string, error) {
		return "archived invoice", nil
	}), toolsafe.WithTracing(tm.Hook))
	breaker := toolsafe.With(func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			out, err := next.Call(ctx, input)
			call.Record(ctx, call.BreakerStateChanged{Breaker: "billing", From: "closed", To: "open"})
			return out, err
		})
	})
	primary := toolsafe.Wrap(middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("no such invoice")
	}), toolsafe.WithTracing(tm.Hook), routeTo(archive), breaker)

	r := primary.Run(context.Background(), "INV-1")
	if r.Status() != "ok" || r.Fallback != "search_archive" {
		t.Fatalf("status %q fallback %q; want ok from search_archive", r.Status(), r.Fallback)
	}
	call, kids := callSpan(t, tm)
	if call.Name() != "execute_tool fetch_invoice" {
		t.Fatalf("root span %q; want the primary's call span", call.Name())
	}
	if got := eventNames(call); !slices.Equal(got, []string{"circuit_breaker.state_change", "fallback"}) {
		t.Errorf("events %v; want the breaker change, then the fallback", got)
	}
	for _, e := range call.Events() {
		switch e.Name {
		case "fallback":
			wantAttrs(t, "fallback event", e.Attributes, otelhook.FallbackKey.String("search_archive"))
		case "circuit_breaker.state_change":
			wantAttrs(t, "breaker event", e.Attributes, otelhook.BreakerKey.String("billing"),
				otelhook.BreakerFromKey.String("closed"), otelhook.BreakerToKey.String("open"))
		}
	}
	wantAttrs(t, "call span", call.Attributes(), otelhook.FallbackKey.String("search_archive"),
		otelhook.SummaryKey.String("ok: answered by the fallback tool search_archive after 1 attempt on fetch_invoice"))
	var names []string
	for _, k := range kids {
		names = append(names, k.Name())
	}
	if !slices.Equal(names, []string{"attempt 1", "execute_tool search_archive"}) {
		t.Fatalf("children %v; want the primary's attempt, then the alternative's call span", names)
	}
	alt := kids[1]
	wantAttrs(t, "alternative's call span", alt.Attributes(), keyToolName.String("search_archive"), otelhook.AttemptsKey.Int(1))
	if got := children(tm.Spans.Ended(), alt); len(got) != 1 || got[0].Name() != "attempt 1" {
		t.Errorf("the alternative's call span has %d children; want its own attempt 1", len(got))
	}
	if got := sumOf(t, tm, "toolsafe.circuit_breaker.state_changes", keyToolName.String("fetch_invoice"),
		otelhook.BreakerKey.String("billing"), otelhook.BreakerToKey.String("open")); got != 1 {
		t.Errorf("breaker state changes %d; want 1", got)
	}
}

// secrets appear in the tool's input, its output and the text of its
// errors; none may reach the telemetry unless recording is opted in.
const (
	secretArg = "sk_live_ARG_51Hx9"
	secretOut = "IBAN DE89 3704 0044 0532 0130 00 OUT"
	secretErr = "pq: password authentication failed for user billing ERR"
)

func TestTelemetryKeepsSecretsOut(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	t.Cleanup(srv.Close)
	srv.Always(billing.InvoicePath("INV-1003"), toolsafetest.Respond(500, secretErr))
	fetch := billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient())
	// leaky answers with secrets in its output and in its errors' text.
	leaky := middleware.Func("leaky", "Answers with secrets.", func(ctx context.Context, input string) (string, error) {
		switch {
		case strings.Contains(input, "fail"):
			return "", fmt.Errorf("dial tcp 10.0.0.7:5432: %s (input %s)", secretErr, input)
		case strings.Contains(input, "transient"):
			return "", middleware.Transient(errors.New(secretErr))
		case strings.Contains(input, "panic"):
			panic(secretErr)
		}
		return secretOut + " for " + input, nil
	})
	calls := []struct {
		tool  tools.Tool
		input string
	}{
		{leaky, `{"card":"` + secretArg + `"}`},
		{leaky, `{"card":"` + secretArg + `","mode":"fail"}`},
		{leaky, `{"card":"` + secretArg + `","mode":"transient"}`},
		{leaky, `{"card":"` + secretArg + `","mode":"panic"}`},
		{fetch, `{"number":"INV-1003","card":"` + secretArg + `"}`},
	}
	run := func(tm *testkit.Recorder) {
		for _, c := range calls {
			tool := toolsafe.Wrap(c.tool,
				toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
				toolsafe.WithTracing(tm.Hook),
				toolsafe.WithLogger(testkit.Quiet()))
			tool.Run(context.Background(), c.input)
		}
	}
	t.Run("by default no argument, output or error text is recorded", func(t *testing.T) {
		tm := testkit.NewRecorder(t)
		run(tm)
		got := tm.Text(t)
		for _, secret := range []string{secretArg, secretOut, secretErr, "password", "10.0.0.7"} {
			if strings.Contains(got, secret) {
				t.Errorf("the telemetry holds %q:\n%s", secret, got)
			}
		}
		if !strings.Contains(got, "tool-panic") || !strings.Contains(got, "tool-failed") {
			t.Errorf("the telemetry lacks the kinds of failure:\n%s", got)
		}
	})
	t.Run("opted in, arguments and results are recorded, error text still not", func(t *testing.T) {
		tm := testkit.NewRecorder(t, otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true))
		run(tm)
		got := tm.Text(t)
		if !strings.Contains(got, string(keyArguments)+" {\"card\":\""+secretArg) || !strings.Contains(got, string(keyResult)+" "+secretOut) {
			t.Errorf("the opted-in arguments or result are missing:\n%s", got)
		}
		for _, secret := range []string{secretErr, "password", "10.0.0.7"} {
			if strings.Contains(got, secret) {
				t.Errorf("the telemetry holds %q:\n%s", secret, got)
			}
		}
	})
}

func TestMetrics(t *testing.T) {
	tm := testkit.NewRecorder(t)
	tool, srv := testkit.Billing(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)}),
		toolsafe.WithTracing(tm.Hook))
	srv.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Reset())
	srv.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())
	ctx := context.Background()
	tool.Run(ctx, "INV-1001") // ok after 3 attempts
	tool.Run(ctx, "INV-1003") // ok after 1
	tool.Run(ctx, "7")        // tool-error after 1
	tool.Run(ctx, "INV-1002") // tool-failed after 4

	fetch := keyToolName.String("fetch_invoice")
	for outcome, want := range map[string]int64{"ok": 2, "tool-error": 1, "tool-failed": 1} {
		if got := sumOf(t, tm, "toolsafe.tool.calls", fetch, otelhook.OutcomeKey.String(outcome)); got != want {
			t.Errorf("calls with outcome %s: %d; want %d", outcome, got, want)
		}
	}
	if got := sumOf(t, tm, "toolsafe.tool.attempts", fetch); got != 9 {
		t.Errorf("attempts %d; want 3+1+1+4 = 9", got)
	}

	var rm metricdata.ResourceMetrics
	if err := tm.Reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelhook.ScopeName {
			t.Errorf("scope %q; want %q", sm.Scope.Name, otelhook.ScopeName)
		}
		for _, m := range sm.Metrics {
			if m.Name != "toolsafe.tool.call.duration" {
				continue
			}
			found = true
			if m.Unit != "s" {
				t.Errorf("duration unit %q; want s", m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("duration is a %T; want a float64 histogram", m.Data)
			}
			var count uint64
			for _, p := range h.DataPoints {
				count += p.Count
				if p.Sum <= 0 {
					t.Errorf("duration sum %v for %v; want > 0", p.Sum, p.Attributes)
				}
			}
			if count != 4 {
				t.Errorf("%d durations recorded; want 4", count)
			}
		}
	}
	if !found {
		t.Error("no toolsafe.tool.call.duration metric")
	}
}

// An unknown argument's name is quoted back to the model, which needs it to
// fix its input; the span keeps the message without it, since it is part of
// the arguments and those are recorded only when opted in.
func TestAnUnknownArgumentNameStaysOutOfTheSpan(t *testing.T) {
	schema := []byte(`{"type":"object","additionalProperties":false,"properties":{"number":{"type":"string"}}}`)
	input := `{"number":"INV-1001","sk-live-SECRET123":"x"}`
	ok := middleware.Func("read_account", "reads an account", func(context.Context, string) (string, error) { return "{}", nil })
	for _, record := range []bool{false, true} {
		tm := testkit.NewRecorder(t, otelhook.WithRecordArguments(record))
		tool := toolsafe.Wrap(ok, toolsafe.WithTracing(tm.Hook), toolsafe.WithArgs(compiled(schema)))
		r := tool.Run(context.Background(), input)
		if r.Failure == nil || r.Failure.Kind != middleware.KindArgsInvalid || !strings.Contains(r.Observation(), "sk-live-SECRET123") {
			t.Fatalf("got %v %q; want args-invalid naming the unknown argument", r.Failure, r.Observation())
		}
		if got := strings.Contains(tm.Text(t), "sk-live-SECRET123"); got != record {
			t.Errorf("with argument recording %v, the name is in the telemetry: %v", record, got)
		}
	}
}

// compiled is the compiled form of a schema the test writes itself, as
// toolsafe.WithArgs takes it; a schema that does not compile is the test's
// own mistake.
func compiled(schema []byte) *argschema.Schema {
	s, err := argschema.Compile(schema)
	if err != nil {
		panic(err)
	}
	return s
}
