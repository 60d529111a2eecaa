package otelhook_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"go.opentelemetry.io/otel/codes"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// The resilience layers as the trace shows them: a breaker that opens, a
// call it refuses, a fallback to another traced tool, the approval gate.
func TestTracingOfResilience(t *testing.T) {
	const invoice = `{"number":"INV-1001"}`

	t.Run("a breaker that opens is an event; the next call is circuit-open with no attempt", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Hour})
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithCircuitBreaker(cb),
			toolsafe.WithTracing(tm.Hook))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())

		first := tool.Run(context.Background(), invoice)
		if first.Failure == nil || first.Failure.Kind != middleware.KindCircuitOpen || first.Attempts != 2 {
			t.Fatalf("first call: %v after %d attempts; want circuit-open after 2", first.Failure, first.Attempts)
		}
		call, attempts := callSpan(t, tm)
		checkAttempts(t, call, attempts, 2)
		if got := eventNames(call); !slices.Equal(got, []string{"retry", "circuit_breaker.state_change", "retry"}) {
			t.Errorf("events %v; want a retry, the breaker opening, the retry refused", got)
		}
		for _, e := range call.Events() {
			if e.Name == "circuit_breaker.state_change" {
				wantAttrs(t, "breaker event", e.Attributes, otelhook.BreakerKey.String("billing"),
					otelhook.BreakerFromKey.String("closed"), otelhook.BreakerToKey.String("open"))
			}
		}
		wantAttrs(t, "call span", call.Attributes(), keyErrorType.String("circuit-open"))

		tm.Spans.Reset()
		second := tool.Run(context.Background(), invoice)
		if second.Failure == nil || second.Failure.Kind != middleware.KindCircuitOpen || second.Attempts != 0 {
			t.Fatalf("second call: %v after %d attempts; want circuit-open after 0", second.Failure, second.Attempts)
		}
		call, attempts = callSpan(t, tm)
		checkAttempts(t, call, attempts, 0)
		wantAttrs(t, "call span", call.Attributes(),
			keyErrorType.String("circuit-open"), otelhook.AttemptsKey.Int(0), otelhook.SummaryKey.String(second.Observation()))
		if call.Status().Code != codes.Error || len(call.Events()) != 0 {
			t.Errorf("status %v events %v; want Error and no event", call.Status(), eventNames(call))
		}
		if got := sumOf(t, tm, "toolsafe.circuit_breaker.state_changes", keyToolName.String("fetch_invoice"),
			otelhook.BreakerToKey.String("open")); got != 1 {
			t.Errorf("breaker openings counted %d; want 1", got)
		}
	})

	t.Run("a fallback is an event, and the alternative's call span is a child of the primary's", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		archive := toolsafe.Wrap(middleware.Func("search_archive", "Searches the archive.", func(context.Context, string) (string, error) {
			return `{"number":"INV-1001","status":"paid","source":"archive"}`, nil
		}), toolsafe.WithTracing(tm.Hook))
		tool, srv := testkit.Billing(t,
			toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
			toolsafe.WithFallback(fallback.To(archive)),
			toolsafe.WithTracing(tm.Hook))
		srv.Always(billing.InvoicePath("INV-1001"), toolsafetest.Reset())

		r := tool.Run(context.Background(), invoice)
		if r.Status() != "ok" || r.Fallback != "search_archive" {
			t.Fatalf("status %q fallback %q (%v); want ok from search_archive", r.Status(), r.Fallback, r.Failure)
		}
		call, kids := callSpan(t, tm)
		if call.Name() != "execute_tool fetch_invoice" {
			t.Fatalf("root %q; want the primary's call span", call.Name())
		}
		var names []string
		for _, k := range kids {
			names = append(names, k.Name())
		}
		if !slices.Equal(names, []string{"attempt 1", "attempt 2", "execute_tool search_archive"}) {
			t.Fatalf("children %v; want the primary's 2 attempts, then the alternative's call span", names)
		}
		if got := eventNames(call); !slices.Equal(got, []string{"retry", "fallback"}) {
			t.Errorf("events %v; want retry, fallback", got)
		}
		wantAttrs(t, "fallback event", call.Events()[1].Attributes, otelhook.FallbackKey.String("search_archive"))
		wantAttrs(t, "call span", call.Attributes(), otelhook.AttemptsKey.Int(2), otelhook.FallbackKey.String("search_archive"))
		noAttrs(t, "call span", call.Attributes(), keyErrorType)
		if call.Status().Code != codes.Unset {
			t.Errorf("status %v; want Unset: the call was answered", call.Status())
		}
		alt := kids[2]
		if got := children(tm.Spans.Ended(), alt); len(got) != 1 || got[0].Name() != "attempt 1" {
			t.Errorf("the alternative's call span has %d children; want its own attempt 1", len(got))
		}
	})

	t.Run("the approval gate's pause has no attempt span and no error", func(t *testing.T) {
		t.Parallel()
		tm := testkit.NewRecorder(t)
		tool, srv := testkit.Billing(t,
			toolsafe.WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
				return approval.Pending, nil
			})),
			toolsafe.WithTracing(tm.Hook))
		_, err := tool.Call(context.Background(), invoice)
		var ar *approval.Required
		if !errors.As(err, &ar) {
			t.Fatalf("err %v; want *ApprovalRequired", err)
		}
		if n := srv.Requests(billing.InvoicePath("INV-1001")); n != 0 {
			t.Fatalf("%d upstream requests; want none", n)
		}
		call, attempts := callSpan(t, tm)
		checkAttempts(t, call, attempts, 0)
		if call.Status().Code != codes.Unset || !slices.Equal(eventNames(call), []string{"approval_required"}) {
			t.Errorf("status %v events %v; want Unset and approval_required", call.Status(), eventNames(call))
		}
		noAttrs(t, "call span", call.Attributes(), keyErrorType)
	})
}
