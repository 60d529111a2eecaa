package run_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// A model that keeps calling a dead tool with the same input, turn after
// turn, gets one retry ladder at the upstream; its later identical calls
// are refused with no request, and the run ends with its final answer.
func TestTheLoopGuardStopsAModelRepeatingAFailedCall(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	t.Cleanup(srv.Close)
	path := billing.InvoicePath("INV-2001")
	srv.Always(path, toolsafetest.Reset())
	var mu sync.Mutex
	var results []middleware.Result
	invoice := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0)}),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		}))
	again := func(id string) toolsafetest.Turn {
		return toolsafetest.Calls(toolsafetest.ToolCall{ID: id, Tool: "fetch_invoice", Arguments: `{"number":"INV-2001"}`})
	}
	model := toolsafetest.NewModel(
		again("c1"), again("c2"), again("c3"), again("c4"),
		toolsafetest.Answer("INV-2001 is unavailable right now."),
	)
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, []tools.Tool{invoice}), agents.WithMaxIterations(10))
	out, err := exec.Call(run.With(context.Background(), "", nil), map[string]any{"input": "What about INV-2001?"})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, _ := out["output"].(string); got != "INV-2001 is unavailable right now." {
		t.Errorf("output %q; want the model's final answer", got)
	}
	if n := srv.Requests(path); n != 3 {
		t.Errorf("the upstream saw %d requests; want one retry ladder of 3", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 4 || results[0].Kind() != middleware.KindFailed {
		t.Fatalf("results %+v; want a tool-failed then refusals", results)
	}
	for _, r := range results[1:] {
		if r.Kind() != middleware.KindCallLimit || r.Attempts != 0 {
			t.Errorf("a later call: %v after %d attempts; want call-limit, none", r.Kind(), r.Attempts)
		}
	}
	want := "fetch_invoice was not called: it was already called once with this input in this request, and its last answer said not to call it again. Do not call fetch_invoice again with this input; use what it answered, tell the user it is unavailable, or use another tool."
	if got := results[1].Observation(); got != want {
		t.Errorf("the model is told\n %q\nwant\n %q", got, want)
	}
	if got := results[3].Observation(); got != want {
		t.Errorf("the third refusal says %q; want the same: the refusals made no call", got)
	}
}

// A model that fixes its argument after a tool-error is never refused for
// repeating itself: its input differs; and repeating a tool-error is not a
// call the model was told not to make.
func TestAModelFixingItsArgumentIsNeverRefused(t *testing.T) {
	var runs atomic.Int32
	lookup := toolsafe.Wrap(middleware.Func("lookup", "", func(_ context.Context, in string) (string, error) {
		runs.Add(1)
		if in != `{"id":"T-7"}` {
			return "", middleware.NewToolError("ids look like T-7")
		}
		return "found", nil
	}))
	ctx := run.With(context.Background(), "", nil)
	for _, in := range []string{`{"id":"7"}`, `{"id":"7"}`, `{"id":"T-7"}`} {
		if r := lookup.Run(ctx, in); r.Kind() == middleware.KindCallLimit {
			t.Fatalf("%s was refused: %q", in, r.Observation())
		}
	}
	if runs.Load() != 3 {
		t.Errorf("%d runs; want 3", runs.Load())
	}
}

// The configured limits: identical calls, calls of one tool, calls of all
// tools in a run; replayed calls of a resumed run do not count twice;
// without a scoped run no limit applies.
func TestCallLimitsPerRun(t *testing.T) {
	var runs atomic.Int32
	echo := func(name string, l run.Limits, opts ...toolsafe.Option) *toolsafe.Tool {
		return toolsafe.Wrap(middleware.Func(name, "", func(_ context.Context, in string) (string, error) {
			runs.Add(1)
			return in, nil
		}), append(opts, toolsafe.WithCallLimits(l))...)
	}
	kinds := func(tool *toolsafe.Tool, ctx context.Context, inputs ...string) []middleware.Kind {
		var ks []middleware.Kind
		for _, in := range inputs {
			ks = append(ks, tool.Run(ctx, in).Kind())
		}
		return ks
	}
	const limited = middleware.KindCallLimit
	t.Run("identical", func(t *testing.T) {
		tool := echo("search", run.Limits{Identical: 2})
		got := kinds(tool, run.With(context.Background(), "", nil), "a", `"a"`, "a", "a", "b")
		if want := []middleware.Kind{"", "", "", limited, ""}; !slices.Equal(got, want) {
			t.Errorf("kinds %v; want %v", got, want)
		}
	})
	t.Run("per tool", func(t *testing.T) {
		tool := echo("search", run.Limits{PerTool: 2})
		got := kinds(tool, run.With(context.Background(), "", nil), "a", "b", "c")
		if want := []middleware.Kind{"", "", limited}; !slices.Equal(got, want) {
			t.Errorf("kinds %v; want %v", got, want)
		}
	})
	t.Run("total", func(t *testing.T) {
		ctx := run.With(context.Background(), "", nil)
		a, b := echo("a", run.Limits{}), echo("b", run.Limits{Total: 2})
		a.Run(ctx, "x")
		a.Run(ctx, "y")
		r := b.Run(ctx, "z")
		if r.Kind() != limited || !strings.Contains(r.Observation(), "this request already made 2 tool calls") {
			t.Errorf("%v: %q; want a refusal naming the 2 calls", r.Kind(), r.Observation())
		}
	})
	t.Run("replays do not count twice", func(t *testing.T) {
		tool := echo("refund", run.Limits{Identical: 1}, toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		l := run.NewMemoryLedger()
		if r := tool.Run(run.With(context.Background(), "r", l), "a"); r.Status() != "ok" {
			t.Fatalf("first: %+v", r)
		}
		if r := tool.Run(run.With(context.Background(), "r", l), "a"); !r.Replayed {
			t.Fatalf("resumed: %+v; want replayed, not refused", r)
		}
	})
	t.Run("without a scoped run no limit applies", func(t *testing.T) {
		tool := echo("search", run.Limits{Identical: 1, PerTool: 1, Total: 1})
		for _, k := range kinds(tool, context.Background(), "a", "a", "a") {
			if k != "" {
				t.Fatalf("kind %v outside a run; want every call to run", k)
			}
		}
	})
	if _, err := toolsafe.New(middleware.Func("x", "", nil), toolsafe.WithCallLimits(run.Limits{PerTool: -1})); err == nil ||
		!strings.Contains(err.Error(), "per tool -1") {
		t.Errorf("New with a negative limit = %v; want it named", err)
	}
}

// Regression: the guard counted only the calls that had finished, so ten
// identical calls dispatched at once all ran past Identical: 1, and 50
// callers past Total: 3. (Identical calls made at once are one call now:
// see TestAnIdenticalCallInFlightIsMadeOnce.)
func TestCallLimitsHoldForCallsMadeAtOnce(t *testing.T) {
	const callers = 50
	t.Run("identical", func(t *testing.T) {
		var ran atomic.Int32
		release := make(chan struct{})
		search := toolsafe.Wrap(middleware.Func("search", "", func(context.Context, string) (string, error) {
			ran.Add(1)
			<-release
			return "found", nil
		}), toolsafe.WithCallLimits(run.Limits{Identical: 1}))
		ctx := run.With(context.Background(), "", run.NewMemoryLedger())
		var wg sync.WaitGroup
		var refused, joined atomic.Int32
		for range callers {
			wg.Go(func() {
				switch r := search.Run(ctx, `{"q":"vpn"}`); {
				case r.Kind() == middleware.KindCallLimit:
					refused.Add(1)
				case r.Replayed && r.Output == "found":
					joined.Add(1) // made while the first was in flight
				}
			})
		}
		close(release)
		wg.Wait()
		if ran.Load() != 1 || refused.Load()+joined.Load() != callers-1 {
			t.Fatalf("ran %d, refused %d, joined %d of %d; want one run, every other one joined or refused", ran.Load(), refused.Load(), joined.Load(), callers)
		}
	})
	for _, tt := range []struct {
		name   string
		limits run.Limits
		input  func(i int) string
		want   int32
	}{
		{"per tool", run.Limits{PerTool: 2}, func(i int) string { return `{"q":` + strconv.Itoa(i) + `}` }, 2},
		{"total", run.Limits{Total: 3}, func(i int) string { return `{"q":` + strconv.Itoa(i) + `}` }, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int32
			release := make(chan struct{})
			arrived := make(chan struct{}, callers) // a call ran or was refused
			search := toolsafe.Wrap(middleware.Func("search", "", func(context.Context, string) (string, error) {
				ran.Add(1)
				arrived <- struct{}{}
				<-release // every admitted call is still running when the others ask
				return "found", nil
			}), toolsafe.WithCallLimits(tt.limits))
			ctx := run.With(context.Background(), "", run.NewMemoryLedger())
			var wg sync.WaitGroup
			var refused atomic.Int32
			for i := range callers {
				wg.Go(func() {
					if r := search.Run(ctx, tt.input(i)); r.Kind() == middleware.KindCallLimit {
						refused.Add(1)
						arrived <- struct{}{}
					}
				})
			}
			for range callers {
				<-arrived
			}
			close(release)
			wg.Wait()
			if ran.Load() != tt.want || refused.Load() != callers-tt.want {
				t.Fatalf("ran %d, refused %d of %d; want %d run", ran.Load(), refused.Load(), callers, tt.want)
			}
		})
	}

	t.Run("a call that paused for approval is not counted", func(t *testing.T) {
		var ran atomic.Int32
		grants := approval.NewGrants()
		refund := toolsafe.Wrap(testkit.Done("refund", &ran), toolsafe.WithApproval(grants),
			toolsafe.WithCallLimits(run.Limits{Identical: 1}))
		ctx := run.With(context.Background(), "", nil)
		if r := refund.Run(ctx, `{"order":"A-1"}`); r.Kind() != middleware.KindApprovalRequired {
			t.Fatalf("%v; want a pause", r.Kind())
		}
		grants.Grant("refund", `{"order":"A-1"}`)
		if r := refund.Run(ctx, `{"order":"A-1"}`); r.Status() != "ok" || ran.Load() != 1 {
			t.Fatalf("%v, ran %d; want the granted call made once", r.Kind(), ran.Load())
		}
		if r := refund.Run(ctx, `{"order":"A-1"}`); r.Kind() != middleware.KindCallLimit || ran.Load() != 1 {
			t.Fatalf("%v, ran %d; want the third refused", r.Kind(), ran.Load())
		}
	})
}

// Regression: a resumed run re-issues the reads of the paused turn, which
// are always made again; the guard counted the original run's reads, so
// with Identical: 1 the re-issued search was refused.
func TestAResumedRunMakesItsReadsAgainWithinTheLimits(t *testing.T) {
	var searches, refunds atomic.Int32
	limits := toolsafe.WithCallLimits(run.Limits{Identical: 1})
	search := toolsafe.Wrap(testkit.Done("search", &searches), limits)
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(testkit.Done("refund", &refunds), limits, toolsafe.WithApproval(grants))
	ctx := run.With(context.Background(), "", run.NewMemoryLedger())
	search.Run(ctx, `{"q":"A-1"}`)
	r := refund.Run(ctx, `{"order":"A-1"}`)
	ar, ok := r.Failure.Cause.(*approval.Required)
	if !ok {
		t.Fatalf("%v; want a pause", r.Kind())
	}
	grants.Grant(ar.Tool, ar.Input)
	resumed := run.Resume(ctx, ar)
	if r := search.Run(resumed, `{"q":"A-1"}`); r.Status() != "ok" || searches.Load() != 2 {
		t.Fatalf("the re-issued search: %v, searches %d; want it made again", r.Kind(), searches.Load())
	}
	if r := refund.Run(resumed, `{"order":"A-1"}`); r.Status() != "ok" || refunds.Load() != 1 {
		t.Fatalf("the resumed refund: %v, refunds %d", r.Kind(), refunds.Load())
	}
	if r := search.Run(resumed, `{"q":"A-1"}`); r.Kind() != middleware.KindCallLimit || searches.Load() != 2 {
		t.Fatalf("a second search in the resumed run: %v, searches %d; want call-limit", r.Kind(), searches.Load())
	}
}
