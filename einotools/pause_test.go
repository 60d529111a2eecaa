package einotools_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// refundProcess is what one process builds: the refund tool behind an
// approval gate and the send_receipt tool, both sending idempotency keys.
// Processes share only the upstream's effects, the grants, the ledger and
// the checkpoint store.
func refundProcess(t *testing.T, refunds, receipts *effects, grants *approval.Grants, results *resultLog) []tool.BaseTool {
	t.Helper()
	ctx := context.Background()
	refund, err := einotools.New(ctx, sideEffect(t, "refund", refunds),
		toolsafe.WithApproval(grants), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithOnResult(results.add))
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := einotools.New(ctx, sideEffect(t, "send_receipt", receipts),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithOnResult(results.add))
	if err != nil {
		t.Fatal(err)
	}
	return []tool.BaseTool{refund, receipt}
}

// resultLog keeps the Results of calls, by call ID. Safe for concurrent use.
type resultLog struct {
	mu   sync.Mutex
	byID map[string][]middleware.Result
}

func (l *resultLog) add(_ context.Context, r middleware.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string][]middleware.Result{}
	}
	l.byID[r.CallID] = append(l.byID[r.CallID], r)
}

func (l *resultLog) of(id string) []middleware.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]middleware.Result(nil), l.byID[id]...)
}

func TestApprovalPauseAndResume(t *testing.T) {
	var refunds, receipts effects
	var results resultLog
	grants := approval.NewGrants()
	ledger := run.NewMemoryLedger()
	checkpoints := newStore()
	llm := script(
		calls(toolCall("call_refund", "refund", `{"order":"A-1001"}`), toolCall("call_receipt", "send_receipt", `{"order":"A-1001"}`)),
		// After the resume the model re-plans and asks for the receipt again.
		calls(toolCall("call_receipt_again", "send_receipt", `{"order":"A-1001"}`)),
		answer("Refunded A-1001 and sent the receipt."))

	// Process 1: the refund pauses, its sibling completes.
	ctx := run.With(context.Background(), "refund-run-1", ledger)
	first := runner(t, llm, checkpoints, refundProcess(t, &refunds, &receipts, grants, &results))
	o := drive(first.Query(ctx, "refund A-1001", adk.WithCheckPointID("cp-1")))
	if o.err != nil || o.interrupt == nil {
		t.Fatalf("want an interrupt, got error %v, answer %q", o.err, o.answer)
	}
	pauses := einotools.Pauses(o.interrupt.InterruptContexts)
	if len(pauses) != 1 {
		t.Fatalf("want one pause, got %v", pauses)
	}
	var id string
	var p *einotools.Pause
	for id, p = range pauses {
	}
	if p.Tool != "refund" || p.CallID != "call_refund" || p.Input != `{"order":"A-1001"}` ||
		p.RunID != "refund-run-1" || p.IdempotencyKey == "" || p.Attempt != 1 || p.Reason == "" {
		t.Fatalf("the pause is %+v", *p)
	}
	if calls, _ := refunds.counts(); calls != 0 {
		t.Fatalf("the refund ran %d times before approval", calls)
	}
	if calls, applied := receipts.counts(); calls != 1 || applied != 1 {
		t.Fatalf("the sibling ran %d times, applied %d, want 1 and 1", calls, applied)
	}

	// The person grants it; process 2 resumes from the checkpoint alone.
	grants.Grant(p.Tool, p.Input)
	second := runner(t, llm, checkpoints, refundProcess(t, &refunds, &receipts, grants, &results))
	iter, err := second.ResumeWithParams(run.With(context.Background(), p.RunID, ledger), "cp-1",
		&adk.ResumeParams{Targets: map[string]any{id: nil}})
	if err != nil {
		t.Fatal(err)
	}
	o = drive(iter)
	if o.err != nil || o.answer != "Refunded A-1001 and sent the receipt." {
		t.Fatalf("the resumed run ended with %v, answer %q", o.err, o.answer)
	}
	if calls, applied := refunds.counts(); calls != 1 || applied != 1 {
		t.Errorf("the refund ran %d times, applied %d, want 1 and 1", calls, applied)
	}
	if !refunds.sawKey(p.IdempotencyKey) {
		t.Errorf("the refund was not sent under the paused call's key %s", p.IdempotencyKey)
	}
	if calls, applied := receipts.counts(); calls != 1 || applied != 1 {
		t.Errorf("the receipt ran %d times, applied %d, want 1 and 1: its repeat is answered from the run ledger", calls, applied)
	}
	again := results.of("call_receipt_again")
	if len(again) != 1 || !again[0].Replayed {
		t.Errorf("the repeated receipt's results are %+v, want one replayed", again)
	}
	seen := llm.observations()
	if !strings.HasPrefix(seen["call_refund"], "refund A-1001: applied") || seen["call_receipt_again"] != seen["call_receipt"] {
		t.Errorf("the model saw %v", seen)
	}
}

func TestResumeWithoutGrantPausesAgain(t *testing.T) {
	var refunds, receipts effects
	var results resultLog
	grants := approval.NewGrants()
	checkpoints := newStore()
	llm := script(calls(toolCall("call_refund", "refund", `{"order":"A-1001"}`)), answer("done"))
	r := runner(t, llm, checkpoints, refundProcess(t, &refunds, &receipts, grants, &results))
	o := drive(r.Query(context.Background(), "refund A-1001", adk.WithCheckPointID("cp-2")))
	if o.interrupt == nil {
		t.Fatalf("want an interrupt, got error %v", o.err)
	}
	iter, err := r.Resume(context.Background(), "cp-2")
	if err != nil {
		t.Fatal(err)
	}
	o = drive(iter)
	if o.interrupt == nil || len(einotools.Pauses(o.interrupt.InterruptContexts)) != 1 {
		t.Fatalf("want the call to pause again: the approver decides, not the resume; got error %v, answer %q", o.err, o.answer)
	}
	if calls, _ := refunds.counts(); calls != 0 {
		t.Errorf("the refund ran %d times without a grant", calls)
	}
}
