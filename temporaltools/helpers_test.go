package temporaltools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// refunds is the upstream of the tests' refund tool: it applies each POST
// /refunds once per Idempotency-Key and records the key of every request
// that reached it.
type refunds struct {
	mu      sync.Mutex
	keys    []string
	byKey   map[string]string
	applied int
}

func (u *refunds) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	u.mu.Lock()
	defer u.mu.Unlock()
	u.keys = append(u.keys, key)
	if u.byKey == nil {
		u.byKey = map[string]string{}
	}
	answer, seen := u.byKey[key]
	if !seen || key == "" {
		u.applied++
		answer = fmt.Sprintf(`{"refund":"R-%d","request":%s}`, u.applied, body)
		if key != "" {
			u.byKey[key] = answer
		}
	}
	_, _ = io.WriteString(w, answer)
}

// seen returns the keys of the requests that reached the upstream, and how
// many refunds it applied.
func (u *refunds) seen() ([]string, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.keys...), u.applied
}

// refundTool posts its input to base+"/refunds" with the call's
// idempotency key, on a client that opens a connection per request.
func refundTool(base string) tools.Tool {
	client := toolsafetest.NoKeepAliveClient()
	return middleware.Func("refund", "Refunds an order.", func(ctx context.Context, input string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/refunds", bytes.NewBufferString(input))
		if err != nil {
			return "", err
		}
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		return middleware.DoHTTP(client, req)
	})
}

// fetchTool reads base+"/invoices" on a client that opens a connection
// per request.
func fetchTool(base string) tools.Tool {
	client := toolsafetest.NoKeepAliveClient()
	return middleware.Func("fetch", "Fetches an invoice.", func(ctx context.Context, input string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/invoices", nil)
		if err != nil {
			return "", err
		}
		return middleware.DoHTTP(client, req)
	})
}

// invoices answers GET /invoices.
var invoices = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, `{"number":"INV-1","amount_eur":25}`)
})

// call is one tool call a test workflow makes.
type call struct{ tool, input, id string }

// calls is a workflow that makes the calls in order through a Run with
// opts, and returns their Results.
func calls(opts RunOptions, cs ...call) func(workflow.Context) ([]Result, error) {
	return func(ctx workflow.Context) ([]Result, error) {
		r, err := NewRun(ctx, opts)
		if err != nil {
			return nil, err
		}
		var out []Result
		for _, c := range cs {
			res, err := r.Call(ctx, c.tool, c.input, c.id)
			if err != nil {
				return out, err
			}
			out = append(out, res)
		}
		return out, nil
	}
}

// fast are activity options whose retries wait 1s each, at most attempts
// of them: in the test environment's time, which skips ahead.
func fast(attempts int32) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 1, MaximumAttempts: attempts},
	}
}

// runWorkflow runs wf in a new test environment with the tools registered
// and returns its Results.
func runWorkflow(t *testing.T, wf func(workflow.Context) ([]Result, error), ts ...*Tool) []Result {
	t.Helper()
	env := newEnv()
	if err := Register(env, ts...); err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	return resultsOf(t, env)
}

// resultsOf is the Results of the workflow env ran.
func resultsOf(t *testing.T, env *testsuite.TestWorkflowEnvironment) []Result {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the workflow failed: %v", err)
	}
	var out []Result
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mustNew is New, failing the test on an error.
func mustNew(t *testing.T, tool tools.Tool, opts ...toolsafe.Option) *Tool {
	t.Helper()
	w, err := New(tool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// show is v as JSON, for failure messages.
func show(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// suite is the SDK's test suite, logging at WARN and above.
func suite() *testsuite.WorkflowTestSuite {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet)
	return &s
}

// newEnv is a test workflow environment of suite's. Its deadlock detector
// waits a minute, not a second: on a busy machine, under the race
// detector, a workflow's coroutine can be kept from running for longer.
func newEnv() *testsuite.TestWorkflowEnvironment {
	env := suite().NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	return env
}
