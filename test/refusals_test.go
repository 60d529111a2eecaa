//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/cachepolicy"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// Every refusal failsafe-go can return, from a policy of the caller's own
// (WithPolicies runs them per attempt, inside the retry), ends the call
// with its kind, not retried; the model is told it was not attempted or
// why not again. Regression: a rate limiter's refusal came back as
// "tool-failed attempts=0: get_item failed. It may work if get_item is
// called again later."
func TestEveryFailsafeRefusalHasItsKind(t *testing.T) {
	var calls atomic.Int32
	ok := middleware.Func("get_item", "", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "item", nil
	})
	failing := middleware.Func("get_item", "", func(context.Context, string) (string, error) {
		calls.Add(1)
		return "", middleware.Transient(errors.New("reset"))
	})
	slow := middleware.Func("get_item", "", func(ctx context.Context, _ string) (string, error) {
		calls.Add(1)
		<-ctx.Done()
		return "", ctx.Err()
	})
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0)})
	tests := []struct {
		name string
		tool func() *toolsafe.Tool
		// warm makes the policy refuse; then one more call is the one checked.
		warm  int
		kind  middleware.Kind
		calls int32 // tool calls made by the checked call
		says  string
	}{
		{"a rate limiter", func() *toolsafe.Tool {
			return toolsafe.Wrap(ok, retry, toolsafe.WithPolicies(ratelimiter.NewBursty[string](1, time.Hour)))
		}, 1, middleware.KindBusy, 0, "get_item was not called: it was called too often (a rate limit). Wait before calling it again, or go on without it."},
		{"a bulkhead of failsafe-go's", func() *toolsafe.Tool {
			bh := bulkhead.New[string](1)
			_ = bh.TryAcquirePermit() // one call holds the only permit
			return toolsafe.Wrap(ok, retry, toolsafe.WithPolicies(bh))
		}, 0, middleware.KindBusy, 0, "get_item was not called"},
		{"an adaptive limiter", func() *toolsafe.Tool {
			al := adaptivelimiter.NewBuilder[string]().WithLimits(1, 1, 1).Build()
			_, _ = al.TryAcquirePermit()
			return toolsafe.Wrap(ok, retry, toolsafe.WithPolicies(al))
		}, 0, middleware.KindBusy, 0, "get_item was not called"},
		{"an adaptive throttler", func() *toolsafe.Tool {
			at := adaptivethrottler.NewBuilder[string]().WithFailureRateThreshold(0.01, 1, time.Hour).WithMaxRejectionRate(1).Build()
			for range 100 {
				at.RecordFailure()
			}
			return toolsafe.Wrap(ok, toolsafe.WithPolicies(at))
		}, 0, middleware.KindBusy, 0, "get_item was not called: its service is failing for many callers, so calls are being held back"},
		{"a circuit breaker of failsafe-go's", func() *toolsafe.Tool {
			cb := circuitbreaker.NewBuilder[string]().WithDelay(time.Hour).Build()
			cb.Open()
			return toolsafe.Wrap(ok, retry, toolsafe.WithPolicies(cb))
		}, 0, middleware.KindCircuitOpen, 0, "get_item was not called: its dependency is down for about"},
		{"failsafe-go's timeout", func() *toolsafe.Tool {
			return toolsafe.Wrap(slow, toolsafe.WithPolicies(timeout.New[string](10*time.Millisecond)))
		}, 0, middleware.KindTimeout, 1, "get_item did not answer"},
	}
	// These cases run in a synctest bubble, where a timer fires only once
	// every goroutine is blocked: the tool has started when its 10ms are
	// up, however busy the machine.
	bubbled := map[string]bool{"failsafe-go's timeout": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T) { checkRefusal(t, tt.tool(), tt.warm, &calls, tt.kind, tt.calls, tt.says) }
			if bubbled[tt.name] {
				synctest.Test(t, check)
				return
			}
			check(t)
		})
	}

	t.Run("a retry the rate limiter refuses after its wait", func(t *testing.T) {
		calls.Store(0)
		tool := toolsafe.Wrap(failing, toolsafe.WithPolicies(ratelimiter.NewBursty[string](1, time.Hour)),
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(time.Millisecond)}))
		r := tool.Run(context.Background(), "x")
		// The wait was spent, so it is in Delays; no second attempt began.
		if r.Kind() != middleware.KindBusy || r.Attempts != 1 || calls.Load() != 1 || len(r.Delays) != 1 {
			t.Fatalf("%v after %d attempts (%d tool calls), delays %v; want tool-busy after 1, one delay", r.Kind(), r.Attempts, calls.Load(), r.Delays)
		}
		want := "get_item failed after 1 attempt, and the next attempt was not made: it was called too often (a rate limit). Wait before calling it again, or go on without it."
		if r.Observation() != want {
			t.Errorf("the model is told %q; want %q", r.Observation(), want)
		}
	})

	t.Run("a retry budget", func(t *testing.T) {
		b := budget.NewBuilder().WithMaxRate(0.0001).WithMinConcurrency(0).Build()
		held, release := make(chan struct{}), make(chan struct{})
		var n atomic.Int32
		holder := toolsafe.Wrap(middleware.Func("get_item", "", func(context.Context, string) (string, error) {
			if n.Add(1) == 2 { // its retry: in flight until released
				close(held)
				<-release
				return "item", nil
			}
			return "", middleware.Transient(errors.New("reset"))
		}), retry, toolsafe.WithRetryBudget(b))
		done := make(chan middleware.Result)
		go func() { done <- holder.Run(context.Background(), "x") }()
		<-held
		calls.Store(0)
		r := toolsafe.Wrap(failing, retry, toolsafe.WithRetryBudget(b)).Run(context.Background(), "x")
		close(release)
		<-done
		if r.Kind() != middleware.KindBudget || calls.Load() != 1 ||
			!strings.Contains(r.Observation(), "get_item failed after 1 attempt and was not retried again") {
			t.Fatalf("%v after %d calls: %q; want budget-exceeded after 1", r.Kind(), calls.Load(), r.Observation())
		}
	})

	// Regression: hedges that all answered wrote the retry's record of the
	// last error at once (a data race under -race). In a synctest bubble
	// the hedges start before the first attempt's 20ms are up, however
	// busy the machine.
	t.Run("hedges that all answer", func(t *testing.T) { synctest.Test(t, hedgesThatAllAnswer) })

	// Regression: a hedge (or a retry policy) of the caller's ran a
	// destructive, key-less tool three times on one grant: it runs behind
	// the gate and the side-effect guard.
	t.Run("a policy that runs attempts again is refused on a tool with side effects or a gate", func(t *testing.T) {
		for _, p := range []failsafe.Policy[string]{
			hedgepolicy.NewWithDelay[string](time.Millisecond),
			retrypolicy.NewWithDefaults[string](),
			fsfallback.NewWithResult("cached"),
		} {
			for _, opts := range [][]toolsafe.Option{
				{toolsafe.WithApproval(approval.NewGrants(), approval.ApproveEachAttempt)},
				{toolsafe.WithApproval(approval.NewGrants())},
				{toolsafe.WithSideEffects(middleware.SideEffectsWithKey)},
			} {
				_, err := toolsafe.New(ok, append(opts, toolsafe.WithPolicies(p))...)
				if err == nil || !strings.Contains(err.Error(), "policy 1 of WithPolicies is a failsafe-go") ||
					!strings.Contains(err.Error(), "use WithRetry for its retries and WithFallback") {
					t.Errorf("New with %T: %v; want it refused, saying what to use", p, err)
				}
			}
			if _, err := toolsafe.New(ok, toolsafe.WithPolicies(p)); err != nil {
				t.Errorf("New with %T on a tool that only reads: %v; want it accepted", p, err)
			}
		}
	})

	// Regression: a retry policy wrapped in a type of the caller's own got
	// past New's check and applied a key-less side effect 4 times; a cache
	// policy answered refund B with refund A's answer.
	t.Run("a policy of the caller's own type that reruns or answers instead fails the attempt", func(t *testing.T) {
		var applied atomic.Int32
		charge := middleware.Func("charge", "", func(context.Context, string) (string, error) {
			applied.Add(1)
			return "", middleware.Transient(errors.New("reset after the charge"))
		})
		tool, err := toolsafe.New(charge, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey),
			toolsafe.WithPolicies(ownRetry{retrypolicy.NewBuilder[string]().WithMaxRetries(3).Build()}))
		if err != nil {
			t.Fatal(err)
		}
		if r := tool.Run(context.Background(), "A-1"); r.Status() == "ok" || applied.Load() != 1 {
			t.Fatalf("%v, applied %d times; want the charge applied once", r.Kind(), applied.Load())
		}

		var refunds atomic.Int32
		refund := middleware.Func("refund", "", func(_ context.Context, order string) (string, error) {
			refunds.Add(1)
			return "refunded " + order, nil
		})
		cache := ownCache{cachepolicy.NewBuilder[string](&mapCache{m: map[string]string{}}).WithKey("k").Build()}
		tool, err = toolsafe.New(refund, toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithPolicies(cache))
		if err != nil {
			t.Fatal(err)
		}
		tool.Run(context.Background(), "A")
		r := tool.Run(context.Background(), "B")
		if r.Status() == "ok" || strings.Contains(r.Observation(), "refunded A") || refunds.Load() != 1 {
			t.Fatalf("%v %q, refunds %d; want refund B failed, not answered with A's", r.Kind(), r.Observation(), refunds.Load())
		}
		if _, err := toolsafe.New(refund, toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithPolicies(cachepolicy.NewBuilder[string](&mapCache{m: map[string]string{}}).Build())); err == nil ||
			!strings.Contains(err.Error(), "a failsafe-go cache policy") {
			t.Fatalf("New with failsafe-go's own cache policy: %v; want it refused", err)
		}
	})

	t.Run("a hedge answers with the first attempt that does", func(t *testing.T) {
		var n atomic.Int32
		first := make(chan struct{})
		hedged := middleware.Func("get_item", "", func(ctx context.Context, _ string) (string, error) {
			if n.Add(1) == 1 {
				<-ctx.Done() // the slow one, cancelled once the hedge answers
				close(first)
				return "", ctx.Err()
			}
			return "hedged", nil
		})
		tool := toolsafe.Wrap(hedged, toolsafe.WithTimeout(time.Minute),
			toolsafe.WithPolicies(hedgepolicy.NewWithDelay[string](5*time.Millisecond)))
		r := tool.Run(context.Background(), "x")
		<-first
		if r.Status() != "ok" || r.Output != "hedged" {
			t.Fatalf("%+v; want the hedge's answer", r)
		}
	})
}

// Regression: a 404's message, "the service answered 404 Not Found", named
// neither the tool nor what to do.
func TestAnHTTPStatusThatIsTheInputsFaultNamesTheToolAndWhatToDo(t *testing.T) {
	up := toolsafetest.NewUpstream(nil)
	defer up.Close()
	client := toolsafetest.NoKeepAliveClient()
	fetch := toolsafe.Wrap(middleware.Func("fetch_invoice", "", func(ctx context.Context, in string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, up.URL()+"/invoices/"+in, nil)
		return middleware.DoHTTP(client, req)
	}), toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0)}))
	for _, tt := range []struct {
		code int
		want string
	}{
		{404, "fetch_invoice failed: the service answered 404 Not Found, so what the input names was not found. Check the input before calling fetch_invoice again, or tell the user."},
		{422, "fetch_invoice failed: the service answered 422 Unprocessable Entity, so it refused the input as invalid. Fix the input before calling fetch_invoice again."},
		{403, "fetch_invoice failed: the service answered 403 Forbidden, so it refused access. Do not call fetch_invoice again for this request; tell the user it is not allowed."},
	} {
		up.Enqueue("/invoices/INV-9", toolsafetest.Respond(tt.code, "db password leaked"))
		r := fetch.Run(context.Background(), "INV-9")
		if r.Kind() != middleware.KindToolError || r.Attempts != 1 || r.Observation() != tt.want {
			t.Errorf("%d: %v after %d attempts: %q; want tool-error after 1: %q", tt.code, r.Kind(), r.Attempts, r.Observation(), tt.want)
		}
	}
}

// ownRetry and ownCache are failsafe-go policies in types of the caller's
// own, which New cannot tell by their type.
type ownRetry struct {
	retrypolicy.RetryPolicy[string]
}

type ownCache struct {
	cachepolicy.CachePolicy[string]
}

type mapCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *mapCache) Get(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *mapCache) Set(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
}

// checkRefusal makes warm calls of tool, then checks that one more ends
// with kind after the given number of tool calls, and that the model is
// told what says.
func checkRefusal(t *testing.T, tool *toolsafe.Tool, warm int, calls *atomic.Int32, kind middleware.Kind, want int32, says string) {
	t.Helper()
	for range warm {
		tool.Run(context.Background(), "x")
	}
	calls.Store(0)
	r := tool.Run(context.Background(), "x")
	if r.Kind() != kind || calls.Load() != want {
		t.Fatalf("%v with %d tool calls (%q); want %v with %d", r.Kind(), calls.Load(), r.Observation(), kind, want)
	}
	if r.Failure.Retryable && kind != middleware.KindTimeout {
		t.Errorf("a refusal is retryable: %+v", r.Failure)
	}
	if !strings.Contains(r.Observation(), says) {
		t.Errorf("the model is told %q; want it to say %q", r.Observation(), says)
	}
}

func hedgesThatAllAnswer(t *testing.T) {
	var n atomic.Int32
	slowish := middleware.Func("get_item", "", func(ctx context.Context, _ string) (string, error) {
		n.Add(1)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
		return "item", nil
	})
	tool := toolsafe.Wrap(slowish, toolsafe.WithPolicies(hedgepolicy.NewBuilderWithDelay[string](time.Millisecond).WithMaxHedges(3).Build()))
	if r := tool.Run(context.Background(), "x"); r.Status() != "ok" || n.Load() < 2 {
		t.Fatalf("%+v after %d tool calls; want ok from hedged calls", r, n.Load())
	}
}
