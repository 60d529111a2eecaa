package temporaltools

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// traced runs a workflow that calls fetch once, retried by Temporal once,
// with Temporal's tracing interceptor and toolsafe's tracing on one
// provider, and returns the spans.
func traced(t *testing.T, hookOpts ...otelhook.Option) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ti, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("temporal")})
	if err != nil {
		t.Fatal(err)
	}
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	up.Enqueue("/invoices", toolsafetest.Reset())
	hook := otelhook.New(append(hookOpts, otelhook.WithTracerProvider(tp))...)
	fetch := mustNew(t, fetchTool(up.URL()), toolsafe.WithTracing(hook))

	env := newEnv()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{ti}, DeadlockDetectionTimeout: time.Minute})
	if err := Register(env, fetch); err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflowWithOptions(calls(RunOptions{Activity: fast(3)}, call{"fetch", `{}`, "c1"}), workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	if res := resultsOf(t, env); res[0].Status() != "ok" {
		t.Fatalf("the call ended %s", show(res))
	}
	return rec.Ended()
}

// parentName is the name of s's parent among spans, or "".
func parentName(s sdktrace.ReadOnlySpan, spans []sdktrace.ReadOnlySpan) string {
	for _, p := range spans {
		if p.SpanContext().SpanID() == s.Parent().SpanID() && s.Parent().IsValid() {
			return p.Name()
		}
	}
	return ""
}

func TestAttemptSpansAreUnderTheActivitysSpan(t *testing.T) {
	t.Run("adding to the activity's span", func(t *testing.T) {
		spans := traced(t, otelhook.WithHostCallSpan())
		var attempts int
		for _, s := range spans {
			switch s.Name() {
			case "attempt 1":
				attempts++
				if p := parentName(s, spans); p != "RunActivity:toolsafe:fetch" {
					t.Fatalf("the attempt span is under %q", p)
				}
			case "execute_tool fetch":
				t.Fatal("a call span of toolsafe's beside the activity's")
			}
		}
		if attempts != 2 {
			t.Fatalf("%d attempt spans, want 2: one per Temporal attempt", attempts)
		}
	})
	t.Run("with a call span of its own", func(t *testing.T) {
		spans := traced(t)
		var calls int
		for _, s := range spans {
			switch s.Name() {
			case "execute_tool fetch":
				calls++
				if p := parentName(s, spans); p != "RunActivity:toolsafe:fetch" {
					t.Fatalf("the call span is under %q", p)
				}
			case "attempt 1":
				if p := parentName(s, spans); p != "execute_tool fetch" {
					t.Fatalf("the attempt span is under %q", p)
				}
			}
		}
		if calls != 2 {
			t.Fatalf("%d call spans, want 2: one per Temporal attempt", calls)
		}
	})
}
