package run_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// keyedUpstream applies each POST once per Idempotency-Key, per path, and
// counts what it applied: the upstream's own proof of exactly-once.
type keyedUpstream struct {
	mu      sync.Mutex
	applied map[string]map[string]bool // path → keys applied
	*toolsafetest.Upstream
}

func startKeyed(t *testing.T) *keyedUpstream {
	t.Helper()
	u := &keyedUpstream{applied: map[string]map[string]bool{}}
	u.Upstream = toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		u.mu.Lock()
		if u.applied[r.URL.Path] == nil {
			u.applied[r.URL.Path] = map[string]bool{}
		}
		if key == "" {
			key = fmt.Sprintf("no-key-%d", len(u.applied[r.URL.Path]))
		}
		u.applied[r.URL.Path][key] = true
		u.mu.Unlock()
		fmt.Fprintf(w, `{"done":%q}`, r.URL.Path)
	}))
	t.Cleanup(u.Close)
	return u
}

// count is how many distinct actions path applied.
func (u *keyedUpstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.applied[path])
}

// poster is a tool that posts its input to path with the call's
// idempotency key.
func (u *keyedUpstream) poster(name, path string) tools.Tool {
	client := toolsafetest.NoKeepAliveClient()
	return middleware.Func(name, "Posts to "+path+".", func(ctx context.Context, input string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.URL()+path, strings.NewReader(input))
		if err != nil {
			return "", err
		}
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		if _, err := middleware.DoHTTP(client, req); err != nil {
			return "", err
		}
		return "done " + path, nil
	})
}

// The README's approval flow: in one turn the model refunds (idempotent,
// with a key) and closes the account (gated); the refund completes, the
// close pauses. The resumed run re-issues both calls, as a real model does
// once the executor has dropped the turn: the refund is answered from the
// run ledger, the close runs once approved. Regression: the refund was
// applied a second time, under a new idempotency key.
// runSeq numbers the runs of tests that use the default ledger.
var runSeq atomic.Int64

func TestAResumedRunNeverRepeatsACompletedCall(t *testing.T) {
	const refundArgs, closeArgs = `{"order":"A-1001","amount_eur":25}`, `{"account":"C-7"}`

	t.Run("OpenAI functions, one turn", func(t *testing.T) {
		up := startKeyed(t)
		grants := approval.NewGrants()
		var refundRuns []middleware.Result
		var mu sync.Mutex
		refund := toolsafe.Wrap(up.poster("issue_refund", "/refunds"), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
				mu.Lock()
				refundRuns = append(refundRuns, r)
				mu.Unlock()
			}))
		closeAccount := toolsafe.Wrap(up.poster("close_account", "/accounts/close"),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants))
		ts := []tools.Tool{refund, closeAccount}

		// The process's default ledger outlives the test: a run ID of its
		// own each time, so that -count=2 does not resume the first run.
		runID := fmt.Sprintf("run-%d", runSeq.Add(1))
		ctx := run.With(context.Background(), runID, nil)
		first := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(
			toolsafetest.Calls(toolsafetest.ToolCall{ID: "c1", Tool: "issue_refund", Arguments: refundArgs}, toolsafetest.ToolCall{ID: "c2", Tool: "close_account", Arguments: closeArgs}),
			toolsafetest.Answer("should not get here"),
		), ts), agents.WithMaxIterations(5))
		_, err := first.Call(ctx, map[string]any{"input": "Refund A-1001 and close C-7."})
		ar := testkit.Paused(t, err)
		if ar.Tool != "close_account" || ar.RunID != runID || up.count("/refunds") != 1 || up.count("/accounts/close") != 0 {
			t.Fatalf("paused %q in run %q; refunds %d, closes %d; want close_account in %s after 1 refund",
				ar.Tool, ar.RunID, up.count("/refunds"), up.count("/accounts/close"), runID)
		}

		grants.Grant(ar.Tool, ar.Input)
		resumed := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(
			// The model asks for both again, the refund's keys in another order.
			toolsafetest.Calls(toolsafetest.ToolCall{ID: "c3", Tool: "issue_refund", Arguments: `{"amount_eur": 25, "order": "A-1001"}`}, toolsafetest.ToolCall{ID: "c4", Tool: "close_account", Arguments: closeArgs}),
			toolsafetest.Answer("Refunded A-1001 and closed C-7."),
		), ts), agents.WithMaxIterations(5))
		out, err := resumed.Call(run.Resume(context.Background(), ar), map[string]any{"input": "Refund A-1001 and close C-7."})
		if err != nil {
			t.Fatalf("resumed run: %v", err)
		}
		if got, _ := out["output"].(string); got != "Refunded A-1001 and closed C-7." {
			t.Errorf("output %q", got)
		}
		if up.count("/refunds") != 1 || up.count("/accounts/close") != 1 {
			t.Fatalf("refunds %d, closes %d; want each applied once across the pause", up.count("/refunds"), up.count("/accounts/close"))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(refundRuns) != 2 || refundRuns[0].Replayed || !refundRuns[1].Replayed || refundRuns[1].Attempts != 0 ||
			refundRuns[1].Output != "done /refunds" {
			t.Errorf("refund results %+v; want the second answered from the ledger, no attempt", refundRuns)
		}
	})

	t.Run("MRKL, across turns", func(t *testing.T) {
		up := startKeyed(t)
		grants := approval.NewGrants()
		refund := toolsafe.Wrap(up.poster("issue_refund", "/refunds"), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		closeAccount := toolsafe.Wrap(up.poster("close_account", "/accounts/close"),
			toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants))
		ts := []tools.Tool{refund, closeAccount}
		step := func(tool, input string) string {
			return "Thought: next step.\nAction: " + tool + "\nAction Input: " + input
		}
		ctx := run.With(context.Background(), "", nil)
		first := agents.NewExecutor(agents.NewOneShotAgent(fake.NewFakeLLM([]string{
			step("issue_refund", refundArgs), step("close_account", closeArgs), "Final Answer: no",
		}), ts), agents.WithMaxIterations(5))
		_, err := first.Call(ctx, map[string]any{"input": "Refund A-1001, then close C-7."})
		ar := testkit.Paused(t, err)
		if ar.RunID == "" || ar.RunID != run.ID(ctx) {
			t.Fatalf("ApprovalRequired.RunID %q; want the run's %q", ar.RunID, run.ID(ctx))
		}
		grants.Grant(ar.Tool, ar.Input)
		resumed := agents.NewExecutor(agents.NewOneShotAgent(fake.NewFakeLLM([]string{
			step("issue_refund", refundArgs), step("close_account", closeArgs), "Final Answer: refunded and closed",
		}), ts), agents.WithMaxIterations(5))
		out, err := resumed.Call(run.Resume(context.Background(), ar), map[string]any{"input": "Refund A-1001, then close C-7."})
		if err != nil {
			t.Fatalf("resumed run: %v", err)
		}
		if got, _ := out["output"].(string); got != "refunded and closed" {
			t.Errorf("output %q", got)
		}
		if up.count("/refunds") != 1 || up.count("/accounts/close") != 1 {
			t.Fatalf("refunds %d, closes %d; want each once", up.count("/refunds"), up.count("/accounts/close"))
		}
	})
}

// counted is a side-effecting tool that counts its runs and echoes its
// input with the call's idempotency key.
func counted(name string, runs *atomic.Int32, keys *[]string, mu *sync.Mutex) tools.Tool {
	return middleware.Func(name, "", func(ctx context.Context, input string) (string, error) {
		runs.Add(1)
		if keys != nil {
			mu.Lock()
			*keys = append(*keys, middleware.IdempotencyKey(ctx))
			mu.Unlock()
		}
		return "did " + input, nil
	})
}

// Calls are matched by tool and canonical input, in order: the same JSON in
// another key order is the same call; another input, or one more identical
// call than the run made, is new.
func TestRunLedgerMatchesTheNthIdenticalCall(t *testing.T) {
	var runs atomic.Int32
	refund := toolsafe.Wrap(counted("refund", &runs, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	l := run.NewMemoryLedger()
	ctx := run.With(context.Background(), "run-match", l)
	for _, in := range []string{`{"a":1,"b":2}`, `{"a":1,"b":2}`, `{"a":9}`} {
		if r := refund.Run(ctx, in); r.Replayed || r.Status() != "ok" {
			t.Fatalf("first run %s: %+v; want a new call", in, r)
		}
	}
	if runs.Load() != 3 {
		t.Fatalf("%d runs; want 3: a run that is not resumed replays nothing", runs.Load())
	}
	resumed := run.With(context.Background(), "run-match", l)
	want := []struct {
		in       string
		replayed bool
	}{
		{"{ \"b\": 2,\n \"a\": 1 }", true}, // the 1st of its kind
		{`{"a":9}`, true},
		{`{"b":2,"a":1}`, true},  // the 2nd
		{`{"a":1,"b":2}`, false}, // the 3rd: beyond the run's
		{`{"a":2}`, false},       // another input
	}
	for _, w := range want {
		if r := refund.Run(resumed, w.in); r.Replayed != w.replayed || r.Status() != "ok" {
			t.Errorf("resumed %s: replayed %v (%+v); want %v", w.in, r.Replayed, r, w.replayed)
		}
	}
	if runs.Load() != 5 {
		t.Errorf("%d runs; want 5: two new calls in the resumed run", runs.Load())
	}
}

// Without a scoped run nothing is recorded or replayed: every call runs.
func TestWithoutARunEveryCallRuns(t *testing.T) {
	var runs atomic.Int32
	refund := toolsafe.Wrap(counted("refund", &runs, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	for range 3 {
		if r := refund.Run(context.Background(), `{"a":1}`); r.Replayed {
			t.Fatal("a call outside a run was replayed")
		}
	}
	if runs.Load() != 3 {
		t.Errorf("%d runs; want 3", runs.Load())
	}
}

// A call whose action may have been applied without an answer is sent
// again in the resumed run, with its old idempotency key, and the upstream
// applies it once.
func TestAnUnknownOutcomeIsSentAgainWithItsKey(t *testing.T) {
	up := startKeyed(t)
	slowOnce := toolsafetest.Slow(time.Second)
	up.Enqueue("/refunds", slowOnce)
	refund := toolsafe.Wrap(up.poster("refund", "/refunds"), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithTimeout(50*time.Millisecond))
	l := run.NewMemoryLedger()
	ctx := run.With(context.Background(), "run-unknown", l)
	r := refund.Run(ctx, `{"order":"A-1"}`)
	if r.Kind() != middleware.KindTimeout || r.Failure.SideEffect != middleware.SideEffectUnknown {
		t.Fatalf("first call %v, side effect %v; want a timeout that may have landed", r.Kind(), r.Failure)
	}
	entries, _ := l.Entries(ctx, "run-unknown")
	if len(entries) != 1 || !entries[0].SideEffectUnknown {
		t.Fatalf("entries %+v; want the unknown outcome recorded", entries)
	}
	resumed := run.With(context.Background(), "run-unknown", l)
	var key string
	spy := toolsafe.Wrap(middleware.Func("refund", "", func(ctx context.Context, in string) (string, error) {
		key = middleware.IdempotencyKey(ctx)
		return up.poster("refund", "/refunds").Call(ctx, in)
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	if r := spy.Run(resumed, `{"order":"A-1"}`); r.Status() != "ok" || r.Replayed {
		t.Fatalf("resumed: %+v; want a call sent again", r)
	}
	if key != entries[0].Key || up.count("/refunds") != 1 {
		t.Errorf("sent again with key %q (first %q); upstream applied %d; want the same key, applied once", key, entries[0].Key, up.count("/refunds"))
	}
}

// A tool that only reads is always called again; a fallback's answer is
// what the ledger keeps, and replays; a destructive call that completed
// with its grant is not asked again.
func TestWhatTheLedgerReplays(t *testing.T) {
	t.Run("a read-only tool is called again", func(t *testing.T) {
		var runs atomic.Int32
		lookup := toolsafe.Wrap(counted("lookup", &runs, nil, nil))
		l := run.NewMemoryLedger()
		lookup.Run(run.With(context.Background(), "ro", l), "x")
		if r := lookup.Run(run.With(context.Background(), "ro", l), "x"); r.Replayed || runs.Load() != 2 {
			t.Errorf("replayed %v after %d runs; want a fresh call", r.Replayed, runs.Load())
		}
	})
	t.Run("the fallback's answer", func(t *testing.T) {
		var alt atomic.Int32
		primary := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("refunds are down")
		}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithFallback(fallback.To(counted("manual_refund", &alt, nil, nil))))
		l := run.NewMemoryLedger()
		if r := primary.Run(run.With(context.Background(), "fb", l), "x"); r.Fallback != "manual_refund" {
			t.Fatalf("first: %+v; want the fallback's answer", r)
		}
		r := primary.Run(run.With(context.Background(), "fb", l), "x")
		if !r.Replayed || r.Fallback != "manual_refund" || r.Output != "did x" || alt.Load() != 1 {
			t.Errorf("resumed: %+v, alternative ran %d; want the fallback's answer replayed", r, alt.Load())
		}
	})
	t.Run("a completed destructive call is not asked again", func(t *testing.T) {
		approver := &testkit.Approver{Decision: approval.Approved}
		var runs atomic.Int32
		refund := toolsafe.Wrap(counted("refund", &runs, nil, nil), toolsafe.WithApproval(approver, approval.ApproveEachAttempt))
		l := run.NewMemoryLedger()
		refund.Run(run.With(context.Background(), "d", l), "x")
		r := refund.Run(run.With(context.Background(), "d", l), "x")
		if !r.Replayed || runs.Load() != 1 || len(approver.Asked()) != 1 {
			t.Errorf("replayed %v, ran %d, asked %d; want replayed, once each", r.Replayed, runs.Load(), len(approver.Asked()))
		}
	})
}

// failingLedger cannot record anything: a store that is down.
type failingLedger struct{}

var errLedgerDown = errors.New("redis: connection refused")

func (failingLedger) Begin(context.Context, string, run.Entry) (run.Begun, error) {
	return run.Begun{}, errLedgerDown
}
func (failingLedger) Finish(context.Context, string, run.Entry) (run.Finished, error) {
	return run.Finished{}, errLedgerDown
}
func (failingLedger) Holds(context.Context, string) (bool, error) { return false, errLedgerDown }

// A ledger that cannot record a call's intent fails closed for a tool with
// side effects (not called) and does not stop a tool that only reads.
// Regression (a store outage reads as the tool's failure): the call ended
// as tool-failed, "do not call it again", and the program could not tell
// it from a real failure. It is the store's condition: tool-busy,
// temporarily unavailable, its cause the ledger's error, and nothing
// counts it as failed for good.
func TestAStoreOutageIsNotTheToolsFailure(t *testing.T) {
	var runs atomic.Int32
	ctx := run.With(context.Background(), "down", failingLedger{})
	refund := toolsafe.Wrap(counted("refund", &runs, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithCallLimits(run.Limits{Identical: 1}))
	for i := range 2 { // the second is not refused as a repeat
		r := refund.Run(ctx, "x")
		if r.Kind() != middleware.KindBusy || runs.Load() != 0 || !errors.Is(r.Failure, errLedgerDown) {
			t.Fatalf("call %d: %v, ran %d, cause %v; want tool-busy, not called, the ledger's error as the cause", i+1, r.Kind(), runs.Load(), r.Failure.Cause)
		}
		want := "refund was not called: the record of this request's calls, which refund must be entered in before it runs so that it is never applied twice, is temporarily unavailable. Try again in a moment; if it is still unavailable, tell the user that refund is temporarily unavailable and to try again later."
		if got := r.Observation(); got != want {
			t.Fatalf("the model is told\n %q\nwant\n %q", got, want)
		}
	}
	if r := toolsafe.Wrap(counted("lookup", &runs, nil, nil)).Run(ctx, "x"); r.Status() != "ok" || runs.Load() != 1 {
		t.Errorf("read-only: %q after %d runs; want ok", r.Status(), runs.Load())
	}
}

// Many runs in parallel share the default ledger safely, and a
// MemoryLedger stays within its bounds, counting what it drops.
func TestTheMemoryLedgerIsBoundedAndSafeForConcurrentUse(t *testing.T) {
	var runs atomic.Int32
	refund := toolsafe.Wrap(counted("refund", &runs, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	l := &run.MemoryLedger{MaxRuns: 20, MaxEntries: 5}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := run.With(context.Background(), fmt.Sprintf("run-%d", i), l)
			for j := range 8 {
				refund.Run(ctx, fmt.Sprintf(`{"n":%d}`, j))
			}
		}()
	}
	wg.Wait()
	if l.Runs() != 20 {
		t.Errorf("%d runs kept; want the cap of 20", l.Runs())
	}
	// 50 runs × 8 entries were appended: at most 20 runs × 5 entries are
	// kept, and every other one is counted as dropped.
	var kept int64
	for i := range 50 {
		es, _ := l.Entries(context.Background(), fmt.Sprintf("run-%d", i))
		if len(es) > 5 {
			t.Errorf("run-%d keeps %d entries; want at most 5", i, len(es))
		}
		kept += int64(len(es))
	}
	if kept > 20*5 || kept+l.Dropped() != 50*8 {
		t.Errorf("%d entries kept, %d dropped; want at most 100 kept and every other one counted", kept, l.Dropped())
	}
	// One run at a time: the least recently used run goes first.
	lru := &run.MemoryLedger{MaxRuns: 2}
	for _, id := range []string{"a", "b", "a", "c"} {
		_, _ = lru.Begin(context.Background(), id, run.Entry{Tool: "refund", Key: id})
	}
	if es, _ := lru.Entries(context.Background(), "b"); len(es) != 0 || lru.Runs() != 2 {
		t.Errorf("run b has %d entries, %d runs kept; want b dropped, a and c kept", len(es), lru.Runs())
	}
	now := time.Now()
	expiring := &run.MemoryLedger{TTL: time.Hour, Now: func() time.Time { return now }}
	_, _ = expiring.Begin(context.Background(), "old", run.Entry{Tool: "refund"})
	now = now.Add(2 * time.Hour)
	if es, _ := expiring.Entries(context.Background(), "old"); len(es) != 0 || expiring.Dropped() != 1 {
		t.Errorf("entries %v, dropped %d after the TTL; want none and 1", es, expiring.Dropped())
	}
}

// Regression: after one refund, 1000 searches in the same run pushed the
// refund's entry out of the bounded ledger, and the resumed run refunded
// again. Reads are dropped first.
func TestReadsCannotPushASideEffectOutOfTheLedger(t *testing.T) {
	var refunds, searches atomic.Int32
	refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	search := toolsafe.Wrap(counted("search", &searches, nil, nil))
	l := run.NewMemoryLedger()
	ctx := run.With(context.Background(), "run-1", l)
	refund.Run(ctx, `{"order":"A-1"}`)
	for i := range run.DefaultLedgerEntries + 10 {
		search.Run(ctx, fmt.Sprintf(`{"q":%d}`, i))
	}
	r := refund.Run(run.With(context.Background(), "run-1", l), `{"order":"A-1"}`)
	if !r.Replayed || refunds.Load() != 1 {
		t.Fatalf("replayed %v, refunds %d; want the refund answered from the ledger, made once", r.Replayed, refunds.Load())
	}
	es, _ := l.Entries(context.Background(), "run-1")
	if len(es) != run.DefaultLedgerEntries || es[0].Tool != "refund" || !es[1].ReadOnly || es[0].ReadOnly {
		t.Fatalf("%d entries, the first %+v; want the cap, the refund kept first", len(es), es[0])
	}
	// A read is never replayed, so its answer is not kept (a run of big
	// reads made a shared ledger slow to read).
	if es[0].Output == "" || es[1].Output != "" {
		t.Errorf("outputs %q and %q; want the refund's kept, the search's not", es[0].Output, es[1].Output)
	}
}

// Regression: three runs that only searched pushed a paused run out of a
// MemoryLedger of three runs, and its charge ran again when it resumed.
// The runs that only read go first.
func TestRunsThatOnlyReadAreDroppedBeforeOneWithSideEffects(t *testing.T) {
	var charges, searches atomic.Int32
	charge := toolsafe.Wrap(counted("charge", &charges, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	search := toolsafe.Wrap(counted("search", &searches, nil, nil))
	l := &run.MemoryLedger{MaxRuns: 3}
	charge.Run(run.With(context.Background(), "paused", l), `{"order":"A-1"}`)
	for i := range 3 {
		search.Run(run.With(context.Background(), fmt.Sprint("reader-", i), l), `{"q":"x"}`)
	}
	if r := charge.Run(run.With(context.Background(), "paused", l), `{"order":"A-1"}`); !r.Replayed || charges.Load() != 1 {
		t.Fatalf("replayed %v, charges %d; want the run kept and the charge answered from it", r.Replayed, charges.Load())
	}
	if l.Runs() != 3 {
		t.Errorf("%d runs kept; want 3", l.Runs())
	}
}
