package temporaltools

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// guarded is a workflow whose later calls the loop guard decides from the
// earlier ones' outcomes; the query "results" gives the Results so far.
func guarded(ctx workflow.Context) ([]Result, error) {
	var out []Result
	if err := workflow.SetQueryHandler(ctx, "results", func() ([]Result, error) { return out, nil }); err != nil {
		return nil, err
	}
	r, err := NewRun(ctx, RunOptions{Activity: realFast(2)})
	if err != nil {
		return nil, err
	}
	for _, in := range []string{`{"n":1}`, `{"n":1}`, `{"n":2}`, `{"n":3}`} {
		res, err := r.Call(ctx, "fetch", in, "")
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

func TestTheLoopGuardDecidesTheSameOnReplayAndNoSpanIsEmittedAgain(t *testing.T) {
	c := devClient(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ti, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("temporal")})
	if err != nil {
		t.Fatal(err)
	}
	opts := worker.Options{Interceptors: []interceptor.WorkerInterceptor{ti}}
	up := toolsafetest.NewUpstream(invoices)
	defer up.Close()
	up.Enqueue("/invoices", toolsafetest.Reset(), toolsafetest.Reset()) // the first call gives up after 2
	fetch := mustNew(t, fetchTool(up.URL()), toolsafe.WithCallLimits(run.Limits{PerTool: 2}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp), otelhook.WithHostCallSpan())))

	queue := unique("replay")
	startWorker(t, c, queue, opts, guarded, fetch)
	ctx := context.Background()
	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: unique("wf"), TaskQueue: queue}, "agent")
	if err != nil {
		t.Fatal(err)
	}
	var ran []Result
	if err := wr.Get(ctx, &ran); err != nil {
		t.Fatal(err)
	}
	want := []middleware.Kind{middleware.KindFailed, middleware.KindCallLimit, "", middleware.KindCallLimit}
	for i, k := range want {
		if ran[i].Kind != k {
			t.Fatalf("call %d ended with %q, want %q: %s", i+1, ran[i].Kind, k, show(ran))
		}
	}
	requests, spans := up.Requests("/invoices"), len(rec.Ended())
	if requests != 3 {
		t.Fatalf("the upstream got %d requests, want 3", requests)
	}

	// The worker replays the whole history to answer a query, as a fresh
	// one would (there is no sticky cache in these tests: see TestMain):
	// the counts are rebuilt from it, the same calls are refused, no
	// activity runs again and no span is emitted again.
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, wr.GetID(), wr.GetRunID(), "results")
	if err != nil {
		t.Fatal(err)
	}
	var replayed []Result
	if err := v.Get(&replayed); err != nil {
		t.Fatal(err)
	}
	if show(replayed) != show(ran) {
		t.Fatalf("the replay decided\n%s\nthe run decided\n%s", show(replayed), show(ran))
	}
	if n := up.Requests("/invoices"); n != requests {
		t.Fatalf("the replay sent %d requests", n-requests)
	}
	emittedAgain(t, rec.Ended()[spans:])

	// And the SDK's replayer finds the workflow deterministic.
	var h historypb.History
	it := c.GetWorkflowHistory(ctx, wr.GetID(), wr.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	rp, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{ti}})
	if err != nil {
		t.Fatal(err)
	}
	rp.RegisterWorkflowWithOptions(guarded, workflow.RegisterOptions{Name: "agent"})
	if err := rp.ReplayWorkflowHistory(quiet, &h); err != nil {
		t.Fatal(err)
	}
	emittedAgain(t, rec.Ended()[spans:])
}

// emittedAgain fails the test for a span of a call, an attempt or an
// activity among spans emitted by a replay. (Temporal's interceptor starts
// a span for the query a replay answers, and one for the workflow it runs
// to answer it: they are not the run's spans again.)
func emittedAgain(t *testing.T, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range spans {
		if s.InstrumentationScope().Name == otelhook.ScopeName || strings.HasPrefix(s.Name(), "StartActivity:") || strings.HasPrefix(s.Name(), "RunActivity:") {
			t.Errorf("the replay emitted the span %q again", s.Name())
		}
	}
}
