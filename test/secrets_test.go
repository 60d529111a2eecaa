//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// Secret-looking strings, planted in upstream error bodies, foreign error
// texts, panic values, cancellation causes, approvers' errors and tool
// arguments. The last two are pieces of the first two, in case something
// quotes them in part.
var secrets = []string{"sk-live-SECRET123", "password=hunter2", "SECRET123", "hunter2"}

// secretText is the text of every planted error and body.
const secretText = "upstream stack trace: auth sk-live-SECRET123 failed, conn string password=hunter2"

// secretInput is the input of every call: the secrets as argument values.
const secretInput = `{"number":"INV-1001","api_key":"sk-live-SECRET123","note":"password=hunter2"}`

// leaky is a tool whose every failure carries the secrets in its text.
func leaky(name string, call func(ctx context.Context) (string, error)) tools.Tool {
	return middleware.Func(name, "A tool that fails with secrets in its errors.", func(ctx context.Context, _ string) (string, error) {
		return call(ctx)
	})
}

// httpGet is a tool that reads path from srv and classifies the answer.
func httpGet(srv *toolsafetest.Upstream, path string) tools.Tool {
	client := toolsafetest.NoKeepAliveClient()
	return leaky("read_account", func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+path, nil)
		if err != nil {
			return "", err
		}
		if _, err := middleware.DoHTTP(client, req); err != nil {
			return "", err
		}
		return "ok", nil
	})
}

// foreign is a reset connection as net/http reports it, with the secrets in
// the URL and the error text.
func foreign() error {
	return &url.Error{Op: "Get", URL: "https://api.example.com/accounts?key=sk-live-SECRET123",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: fmt.Errorf("%s: %w", secretText, syscall.ECONNRESET)}}
}

// TestSecretsStayOut runs every kind of failure with the secrets planted
// everywhere a tool or an upstream can put them, tracing on (arguments and
// results not recorded) and metrics on, and finds them in no observation,
// no span (name, status, attribute, event, link) and no metric attribute.
// (otelhook's TestTelemetryKeepsSecretsOut covers successful output and the
// opt-in recording of arguments and results.)
func TestSecretsStayOut(t *testing.T) {
	tm := testkit.NewRecorder(t)
	srv := toolsafetest.NewUpstream(nil)
	t.Cleanup(srv.Close)
	srv.Always("/500", toolsafetest.Respond(http.StatusInternalServerError, secretText))
	srv.Always("/404", toolsafetest.Respond(http.StatusNotFound, secretText))
	srv.Always("/429", toolsafetest.Respond(http.StatusTooManyRequests, secretText).WithRetryAfter("3600"))

	traced := func(opts ...toolsafe.Option) []toolsafe.Option {
		return append([]toolsafe.Option{toolsafe.WithTracing(tm.Hook), toolsafe.WithLogger(testkit.Quiet())}, opts...)
	}
	wrap := func(tool tools.Tool, opts ...toolsafe.Option) *toolsafe.Tool {
		t.Helper()
		w, err := toolsafe.New(tool, traced(opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)})
	failing := leaky("read_account", func(context.Context) (string, error) { return "", foreign() })
	ctx := context.Background()

	type outcome struct {
		name string
		r    middleware.Result
		err  error // what Call would return besides the observation: a pause
	}
	var outcomes []outcome
	run := func(ctx context.Context, name string, tool *toolsafe.Tool) middleware.Result {
		t.Helper()
		r := tool.Run(ctx, secretInput)
		var err error
		if r.Failure != nil && r.Failure.Kind == middleware.KindApprovalRequired {
			err = r.Failure.Cause
		}
		outcomes = append(outcomes, outcome{name, r, err})
		return r
	}

	// tool-failed, four ways.
	run(ctx, "HTTP 500 with the secrets in its body", wrap(httpGet(srv, "/500"), retry))
	run(ctx, "429 asking for longer than the deadline", wrap(httpGet(srv, "/429"), retry, toolsafe.WithDeadline(time.Minute)))
	run(ctx, "a foreign error", wrap(failing, retry))
	run(ctx, "a Transient error", wrap(leaky("read_account", func(context.Context) (string, error) {
		return "", middleware.Transient(errors.New(secretText))
	}), retry))
	failingAlt := leaky("read_archive", func(context.Context) (string, error) { return "", foreign() })
	run(ctx, "a fallback that fails too", wrap(failing, retry, toolsafe.WithFallback(fallback.To(wrap(failingAlt)))))

	// tool-timeout: the attempt's, and the call's.
	waitThenLeak := leaky("read_account", func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", fmt.Errorf("%s: %w", secretText, ctx.Err())
	})
	run(ctx, "the attempt timeout", wrap(waitThenLeak, toolsafe.WithTimeout(10*time.Millisecond)))
	run(ctx, "the deadline", wrap(waitThenLeak, toolsafe.WithDeadline(10*time.Millisecond)))

	// tool-error: the tool's own safe message; an HTTP 404.
	run(ctx, "a ToolError with a secret cause", wrap(leaky("read_account", func(context.Context) (string, error) {
		return "", middleware.NewToolError("account INV-1001 does not exist; check the number with the user.").WithCause(errors.New(secretText))
	})))
	run(ctx, "HTTP 404 with the secrets in its body", wrap(httpGet(srv, "/404"), retry))

	// args-invalid: the secrets are values of wrong arguments.
	schema := []byte(`{"type":"object","properties":{
		"number":{"type":"string","pattern":"^INV-[0-9]+$"},
		"api_key":{"type":"integer"},
		"note":{"type":"string","maxLength":4}},
		"required":["number"]}`)
	run(ctx, "invalid arguments", wrap(failing, toolsafe.WithArgsSchema(schema)))

	// circuit-open: a failure with the secrets opens the breaker.
	cb := policy.NewCircuitBreaker("accounts", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	breaking := wrap(failing, toolsafe.WithCircuitBreaker(cb))
	run(ctx, "the failure that opens the breaker", breaking)
	run(ctx, "an open breaker", breaking)

	// tool-busy: one call holds the only permit of the bulkhead.
	entered, release := make(chan struct{}), make(chan struct{})
	var holder atomic.Bool
	holding := leaky("read_account", func(ctx context.Context) (string, error) {
		if !holder.CompareAndSwap(false, true) {
			return "", foreign() // the bulkhead let a second call through
		}
		close(entered)
		<-release
		return "ok", nil
	})
	bulkheaded := wrap(holding, toolsafe.WithBulkhead(policy.NewBulkhead("accounts", 1, 0)))
	held := make(chan middleware.Result, 1)
	go func() { held <- bulkheaded.Run(ctx, secretInput) }()
	select {
	case <-entered:
	case r := <-held:
		t.Fatalf("the call meant to hold the bulkhead ended: %s", r.Observation())
	}
	run(ctx, "a full bulkhead", bulkheaded)
	close(release)
	<-held

	// budget-exceeded: a retry in flight spends a budget of none.
	retrying, releaseRetry := make(chan struct{}), make(chan struct{})
	var retried sync.Once
	spender := leaky("read_account", func(ctx context.Context) (string, error) {
		if middleware.AttemptNumber(ctx) == 1 {
			return "", foreign()
		}
		retried.Do(func() { close(retrying) })
		<-releaseRetry
		return "ok", nil
	})
	budgeted := wrap(spender, retry, toolsafe.WithRetryBudget(budget.NewBuilder().WithMaxRate(0).WithMinConcurrency(0).Build()))
	go func() { held <- budgeted.Run(ctx, secretInput) }()
	select {
	case <-retrying:
	case r := <-held:
		t.Fatalf("the call meant to retry ended: %s", r.Observation())
	}
	run(ctx, "a spent retry budget", budgeted)
	close(releaseRetry)
	<-held

	// tool-panic: the panic value is the secret.
	run(ctx, "a panic", wrap(leaky("read_account", func(context.Context) (string, error) { panic(secretText) })))

	// approval-required and approval-denied.
	grants := approval.NewGrants()
	gated := wrap(failing, toolsafe.WithApproval(grants))
	run(ctx, "no grant yet", gated)
	failingApprover := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		return approval.Pending, errors.New(secretText)
	})
	run(ctx, "an approver that fails", wrap(failing, toolsafe.WithApproval(failingApprover)))
	grants.Deny("read_account", secretInput)
	run(ctx, "a denial", gated)

	// canceled: the cause of the cancellation is the secret.
	started := make(chan struct{})
	cctx, cancel := context.WithCancelCause(ctx)
	go func() {
		<-started
		cancel(errors.New(secretText))
	}()
	run(cctx, "the caller's cancellation", wrap(leaky("read_account", func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		return "", fmt.Errorf("%s: %w", secretText, context.Cause(ctx))
	})))

	// Every kind was produced, and none let a secret through.
	want := []middleware.Kind{
		middleware.KindFailed, middleware.KindTimeout, middleware.KindToolError, middleware.KindArgsInvalid,
		middleware.KindCircuitOpen, middleware.KindBusy, middleware.KindBudget, middleware.KindPanic,
		middleware.KindApprovalRequired, middleware.KindApprovalDenied, middleware.KindCanceled,
	}
	var got []middleware.Kind
	for _, o := range outcomes {
		if o.r.Failure == nil {
			t.Errorf("%s: the call succeeded; want a failure", o.name)
			continue
		}
		if !slices.Contains(got, o.r.Failure.Kind) {
			got = append(got, o.r.Failure.Kind)
		}
		texts := map[string]string{"observation": o.r.Observation(), "model-facing message": o.r.Failure.Error()}
		if o.err != nil {
			texts["pause error"] = o.err.Error()
		}
		for what, text := range texts {
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s (%s): the %s holds %q: %q", o.name, o.r.Failure.Kind, what, s, text)
				}
			}
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("no call ended with %s; got %v", k, got)
		}
	}

	text := tm.Text(t)
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("the telemetry holds %q:\n%s", s, text)
		}
	}
	for _, k := range want {
		if !strings.Contains(text, `toolsafe.outcome=`+string(k)) {
			t.Errorf("no metric has outcome %s: the test did not see every kind through the telemetry:\n%s", k, text)
		}
	}
}
