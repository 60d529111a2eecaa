package temporaltools

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestTheKeyComesFromTheWorkflowAndTheActivityAndHoldsAcrossTemporalsAttempts(t *testing.T) {
	var u refunds
	up := toolsafetest.NewUpstream(&u)
	defer up.Close()
	// The first attempt is applied, then its connection reset: Temporal
	// retries it, under the same key, and the upstream applies it once.
	up.Enqueue("/refunds", toolsafetest.ApplyThenReset(), toolsafetest.Unavailable("1"))
	refund := mustNew(t, refundTool(up.URL()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))

	env := newEnv()
	if err := Register(env, refund); err != nil {
		t.Fatal(err)
	}
	var infos []activity.Info
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		infos = append(infos, *info)
	})
	env.RegisterWorkflowWithOptions(calls(RunOptions{Activity: fast(5)}, call{"refund", `{"order":"A-1","amount_eur":25}`, "c1"}), workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	res := resultsOf(t, env)

	keys, applied := u.seen() // the 503 of attempt 2 never reached the handler
	if n := up.Requests("/refunds"); n != 3 || len(keys) != 2 || applied != 1 {
		t.Fatalf("the upstream got %d requests, its handler %d, and applied %d refunds; want 3, 2 and 1", n, len(keys), applied)
	}
	if len(infos) != 3 || infos[0].ActivityID != infos[2].ActivityID || infos[2].Attempt != 3 {
		t.Fatalf("the activity attempts were %s", show(infos))
	}
	want := Key(infos[0].WorkflowExecution.ID, infos[0].WorkflowExecution.RunID, infos[0].ActivityID)
	for i, k := range keys {
		if k != want {
			t.Fatalf("request %d carried the key %q, want %q, the workflow's and the activity's", i+1, k, want)
		}
	}
	if r := res[0]; r.Status() != "ok" || !strings.Contains(r.Observation, `"refund":"R-1"`) || r.Attempts != 3 {
		t.Fatalf("the call ended %s", show(r))
	}
}

func TestWhenTemporalGivesUpTheModelIsToldWhatWasTried(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	up.Always("/invoices", toolsafetest.Reset())
	fetch := mustNew(t, fetchTool(up.URL()))
	res := runWorkflow(t, calls(RunOptions{Activity: fast(4)}, call{"fetch", `{"number":"INV-1"}`, "c1"}), fetch)

	r := res[0]
	want := "fetch failed (the connection was reset) after 4 attempts over 3s. These retries were automatic: do not call fetch again with the same input for this request; tell the user it is unavailable or use another tool."
	if r.Observation != want || r.Kind != middleware.KindFailed || r.Attempts != 4 {
		t.Fatalf("the model is told %q (kind %s, %d attempts), want %q", r.Observation, r.Kind, r.Attempts, want)
	}
	if n := up.Requests("/invoices"); n != 4 {
		t.Fatalf("the upstream got %d requests, want 4: one per Temporal attempt", n)
	}
}

func TestAWorkerThatNeverAnswersIsATimeoutTheModelIsToldOf(t *testing.T) {
	// The tool hangs past the activity's StartToCloseTimeout (no attempt
	// timeout of toolsafe's): Temporal times the attempts out.
	hang := mustNew(t, middleware.Func("fetch", "d", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	opts := fast(1)
	opts.StartToCloseTimeout = time.Second
	res := runWorkflow(t, calls(RunOptions{Activity: opts}, call{"fetch", `{}`, "c1"}), hang)
	r := res[0]
	if r.Kind != middleware.KindTimeout || !strings.HasPrefix(r.Observation, "fetch did not answer within 1s after 1 attempt.") ||
		!strings.Contains(r.Observation, "may have been applied") {
		t.Fatalf("the model is told %q (kind %s)", r.Observation, r.Kind)
	}
}

func TestTheLoopGuardCountsTheWorkflowsCalls(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	up.Enqueue("/invoices", toolsafetest.Reset(), toolsafetest.Reset())
	fetch := mustNew(t, fetchTool(up.URL()), toolsafe.WithCallLimits(run.Limits{PerTool: 3}))
	in := `{"number":"INV-1"}`
	res := runWorkflow(t, calls(RunOptions{Activity: fast(2)},
		call{"fetch", in, ""},                     // gives up after 2 attempts: final
		call{"fetch", in, ""},                     // the same again: refused, no request
		call{"fetch", `{"number":"INV-2"}`, ""},   // another input: answers
		call{"fetch", `{"number":"INV-3"}`, ""},   // the third call of the tool: answers
		call{"fetch", `{"number":"INV-4"}`, "c5"}, // past PerTool 3: refused
	), fetch)

	kinds := []middleware.Kind{middleware.KindFailed, middleware.KindCallLimit, "", "", middleware.KindCallLimit}
	for i, k := range kinds {
		if res[i].Kind != k {
			t.Fatalf("call %d ended with %q, want %q: %s", i+1, res[i].Kind, k, show(res))
		}
	}
	if n := up.Requests("/invoices"); n != 4 {
		t.Fatalf("the upstream got %d requests, want 4 (2 attempts, then 2 answers)", n)
	}
	if !strings.Contains(res[1].Observation, "fetch was not called") || res[1].CallID != "call-2" || res[4].CallID != "c5" {
		t.Fatalf("the refusals: %s", show(res))
	}
}

func TestNewRunRefusesRetriesWithoutEnd(t *testing.T) {
	for name, opts := range map[string]workflow.ActivityOptions{
		"no maximum attempts": {StartToCloseTimeout: time.Second},
		"no timeout":          {ActivityID: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			env := newEnv()
			env.RegisterWorkflowWithOptions(calls(RunOptions{Activity: opts}), workflow.RegisterOptions{Name: "agent"})
			env.ExecuteWorkflow("agent")
			if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "temporaltools:") {
				t.Fatalf("got %v, want NewRun's error", err)
			}
		})
	}
}

func TestToolsafesRetriesAreOffInsideAnActivityUnlessAsked(t *testing.T) {
	for _, c := range []struct {
		name     string
		opt      toolsafe.Option
		requests int // for 2 Temporal attempts that each fail
	}{
		{"without RetryInActivity, one attempt per activity attempt", nil, 2},
		{"RetryInActivity asks for both", RetryInActivity(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0)}), 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := toolsafetest.NewUpstream(invoices)
			defer up.Close()
			up.Always("/invoices", toolsafetest.Reset())
			res := runWorkflow(t, calls(RunOptions{Activity: fast(2)}, call{"fetch", `{}`, "c1"}), mustNew(t, fetchTool(up.URL()), c.opt))
			if n := up.Requests("/invoices"); n != c.requests || res[0].Kind != middleware.KindFailed {
				t.Fatalf("the upstream got %d requests, want %d; the call ended %s", n, c.requests, show(res))
			}
		})
	}
}

// Regression (issue 32, item 10, Temporal's sibling): a toolsafe.WithRetry
// among New's options was silently overridden by the one-attempt retry New
// adds. A guard is set once: New refuses it, saying why and what to give
// instead.
func TestAWithRetryGivenToAToolRunAsAnActivityIsRefused(t *testing.T) {
	_, err := New(fetchTool("http://127.0.0.1:1"), toolsafe.WithRetry(policy.Retry{MaxRetries: 2}))
	if !errors.Is(err, toolsafe.ErrConfig) || !strings.Contains(err.Error(), `tool "fetch": toolsafe.WithRetry is refused for a tool run as an activity`) ||
		!strings.Contains(err.Error(), "drop toolsafe.WithRetry, or give RetryInActivity") {
		t.Fatalf("New with WithRetry: %v; want ErrConfig saying to drop it or give RetryInActivity", err)
	}
	// One WithRetry was given: the error must not say two were.
	if strings.Contains(err.Error(), "given twice") {
		t.Fatalf("New with one WithRetry: %v; it says the option was given twice", err)
	}
	_, err = New(fetchTool("http://127.0.0.1:1"), toolsafe.WithTimeout(-1))
	if err == nil || strings.Contains(err.Error(), "RetryInActivity") {
		t.Fatalf("New with an invalid option: %v; want its own problem, not the retry's", err)
	}
}

func TestAnAlternativeOfAToolWithoutKeysIsCalledInsideAnActivity(t *testing.T) {
	var called atomic.Int32
	alt := middleware.Func("alt", "d", func(context.Context, string) (string, error) {
		called.Add(1)
		return "from the alternative", nil
	})
	prim := middleware.Func("prim", "d", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("not here")
	})
	tool := mustNew(t, prim, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey), toolsafe.WithFallback(fallback.To(alt)))
	res := runWorkflow(t, calls(RunOptions{Activity: fast(2)}, call{"prim", `{}`, "c1"}), tool)
	if r := res[0]; r.Status() != "ok" || r.Fallback != "alt" || !strings.HasSuffix(r.Observation, ") from the alternative") || r.SideEffectUnknown || called.Load() != 1 {
		t.Fatalf("the call ended %s; the alternative was called %d times", show(r), called.Load())
	}
}

func TestWhenTheUpstreamAsksToWaitLongerThanTheCallMayTakeTheModelIsTold(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	up.Always("/invoices", toolsafetest.Unavailable("120"))
	opts := fast(5)
	opts.ScheduleToCloseTimeout = time.Minute
	res := runWorkflow(t, calls(RunOptions{Activity: opts}, call{"fetch", `{}`, "c1"}), mustNew(t, fetchTool(up.URL())))
	want := "fetch failed (HTTP 503 Service Unavailable) after 1 attempt. The service asked to wait 2m0s before trying again, longer than this call may take. Wait at least 2m0s before calling fetch again, or go on without it."
	if r := res[0]; r.Observation != want || r.Kind != middleware.KindFailed {
		t.Fatalf("the model is told %q, want %q", r.Observation, want)
	}
	if n := up.Requests("/invoices"); n != 1 {
		t.Fatalf("the upstream got %d requests, want 1: the wait it asked for did not fit", n)
	}
}
