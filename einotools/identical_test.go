package einotools_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// joinedLog is a log handler that tells, on its channel, each call that
// waits for an identical call in flight (toolsafe's DEBUG line for it).
type joinedLog chan struct{}

func (j joinedLog) Enabled(context.Context, slog.Level) bool { return true }
func (j joinedLog) WithAttrs([]slog.Attr) slog.Handler       { return j }
func (j joinedLog) WithGroup(string) slog.Handler            { return j }
func (j joinedLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "waits for it") {
		j <- struct{}{}
	}
	return nil
}

// refunder is an Eino tool that POSTs each refund to the upstream at base.
func refunder(t *testing.T, base string) tool.InvokableTool {
	t.Helper()
	client := toolsafetest.NoKeepAliveClient()
	it, err := utils.InferTool("refund", "Refunds an order.", func(ctx context.Context, in orderArgs) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/refunds", strings.NewReader(in.Order))
		if err != nil {
			return "", err
		}
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		out, err := middleware.DoHTTP(client, req)
		return "refund " + in.Order + ": " + out, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// Regression (issue 32, item 6, through Eino's ToolsNode): a model that
// asks for the same refund twice in one turn (two tool calls, one input)
// had it sent twice, Eino running the calls at once. The second waits for
// the first and replays its answer: the upstream counts one request, and
// the model reads the same answer for both calls.
func TestAnIdenticalCallInFlightIsMadeOnce(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 2)
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // the first refund is in flight until the second call waits for it
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "refunded 900 EUR")
	}))
	t.Cleanup(up.Close)
	joined := make(joinedLog, 1)
	var results resultLog
	refund, err := einotools.New(context.Background(), refunder(t, up.URL()),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithOnResult(results.add), toolsafe.WithLogger(slog.New(joined)))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-arrived
		select {
		case <-joined:
		case <-arrived: // the second was sent too: the test fails below
		}
		close(release)
	}()
	llm := script(calls(toolCall("call_1", "refund", `{"order":"A-1001"}`), toolCall("call_2", "refund", `{"order": "A-1001"}`)),
		answer("Refunded A-1001."))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{refund}).Query(run.With(context.Background(), "", nil), "refund A-1001"))
	if o.err != nil || o.answer != "Refunded A-1001." {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	if n := up.Requests("/refunds"); n != 1 {
		t.Fatalf("the upstream got %d refunds; want 1", n)
	}
	seen := llm.observations()
	if seen["call_1"] != "refund A-1001: refunded 900 EUR" || seen["call_2"] != seen["call_1"] {
		t.Errorf("the model saw %v; want the one answer for both calls", seen)
	}
	a, b := results.of("call_1"), results.of("call_2")
	if len(a) != 1 || len(b) != 1 || a[0].Replayed == b[0].Replayed {
		t.Errorf("results %+v and %+v; want one call made and the other replaying it", a, b)
	}
}

// The first of two identical calls pauses for approval: the second pauses
// too, each an interrupt of its own call; once granted and resumed
// (Eino resumes both at once), the refund is made once and both calls
// answer with it.
func TestAnIdenticalCallSharesThePauseOfTheFirst(t *testing.T) {
	var refunds effects
	var results resultLog
	grants := approval.NewGrants()
	ledger := run.NewMemoryLedger()
	checkpoints := newStore()
	newRefund := func() tool.BaseTool {
		r, err := einotools.New(context.Background(), sideEffect(t, "refund", &refunds),
			toolsafe.WithApproval(grants), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithOnResult(results.add))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	llm := script(calls(toolCall("call_1", "refund", `{"order":"A-1001"}`), toolCall("call_2", "refund", `{"order":"A-1001"}`)),
		answer("Refunded A-1001."))
	ctx := run.With(context.Background(), "run-twice", ledger)
	o := drive(runner(t, llm, checkpoints, []tool.BaseTool{newRefund()}).Query(ctx, "refund A-1001", adk.WithCheckPointID("cp-twice")))
	if o.interrupt == nil {
		t.Fatalf("want an interrupt, got %v, %q", o.err, o.answer)
	}
	pauses := einotools.Pauses(o.interrupt.InterruptContexts)
	targets := map[string]any{}
	byCall := map[string]*einotools.Pause{}
	for id, p := range pauses {
		targets[id] = nil
		byCall[p.CallID] = p
	}
	p1, p2 := byCall["call_1"], byCall["call_2"]
	if len(pauses) != 2 || p1 == nil || p2 == nil || p1.IdempotencyKey != p2.IdempotencyKey || p1.RunID != "run-twice" {
		t.Fatalf("pauses %v; want one for each call, with one key", pauses)
	}
	if calls, _ := refunds.counts(); calls != 0 {
		t.Fatalf("the refund ran %d times before approval", calls)
	}
	grants.Grant("refund", `{"order":"A-1001"}`) // the person approves the refund once
	iter, err := runner(t, llm, checkpoints, []tool.BaseTool{newRefund()}).ResumeWithParams(run.With(context.Background(), "run-twice", ledger),
		"cp-twice", &adk.ResumeParams{Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	if o := drive(iter); o.err != nil || o.answer != "Refunded A-1001." {
		t.Fatalf("the resumed run ended with %v, answer %q", o.err, o.answer)
	}
	if calls, applied := refunds.counts(); calls != 1 || applied != 1 {
		t.Errorf("the refund ran %d times, applied %d; want 1 and 1", calls, applied)
	}
	seen := llm.observations()
	if !strings.HasPrefix(seen["call_1"], "refund A-1001: applied") || seen["call_2"] != seen["call_1"] {
		t.Errorf("the model saw %v; want the one refund's answer for both calls", seen)
	}
}
