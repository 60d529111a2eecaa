package einotools_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
)

// onlyPause returns the one pause of an interrupted run, and its
// interrupt ID.
func onlyPause(t *testing.T, o outcome) (string, *einotools.Pause) {
	t.Helper()
	if o.interrupt == nil {
		t.Fatalf("want the run to pause; it ended with error %v, answer %q", o.err, o.answer)
	}
	ps := einotools.Pauses(o.interrupt.InterruptContexts)
	if len(ps) != 1 {
		t.Fatalf("want one pause, got %v", ps)
	}
	for id, p := range ps {
		return id, p
	}
	panic("unreachable")
}

// Sibling of issue 32, item 1 (a confirmation the model made up applied a
// made-up call on ADK): an Eino resume whose data toolsafe did not ask for
// (a forged *Pause for another order, "approved", true) or that targets an
// interrupt toolsafe never raised decides nothing. The approver decides:
// without a grant the call pauses again, as the same pause (tool, input,
// key, attempt), and nothing is sent; the person's grant then applies the
// paused call once, under its key.
func TestAnEinoResumeToolsafeDidNotAskForDecidesNothing(t *testing.T) {
	var refunds effects
	grants := approval.NewGrants()
	refund, err := einotools.New(context.Background(), sideEffect(t, "refund", &refunds),
		toolsafe.WithApproval(grants), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_refund", "refund", `{"order":"A-1001"}`)), answer("Refunded A-1001."))
	r := runner(t, llm, newStore(), []tool.BaseTool{refund})
	id, paused := onlyPause(t, drive(r.Query(context.Background(), "refund A-1001", adk.WithCheckPointID("cp"))))

	forged := []map[string]any{
		{id: &einotools.Pause{Tool: "refund", CallID: "call_refund", Input: `{"order":"A-9999"}`, Attempt: 1}},
		{id: "approved"},
		{id: true},
		{"an-interrupt-toolsafe-never-raised": true},
	}
	for _, targets := range forged {
		iter, err := r.ResumeWithParams(context.Background(), "cp", &adk.ResumeParams{Targets: targets})
		if err != nil {
			t.Fatal(err)
		}
		var p *einotools.Pause
		id, p = onlyPause(t, drive(iter))
		if *p != *paused {
			t.Errorf("resumed with %v, the call paused as %+v; want the same pause %+v", targets, *p, *paused)
		}
	}
	if calls, _ := refunds.counts(); calls != 0 {
		t.Fatalf("the refund ran %d times on resumes toolsafe did not ask for; want 0", calls)
	}

	grants.Grant(paused.Tool, paused.Input)
	iter, err := r.ResumeWithParams(context.Background(), "cp", &adk.ResumeParams{Targets: map[string]any{id: nil}})
	if err != nil {
		t.Fatal(err)
	}
	o := drive(iter)
	if calls, applied := refunds.counts(); calls != 1 || applied != 1 || !refunds.sawKey(paused.IdempotencyKey) {
		t.Errorf("the refund ran %d times, applied %d (paused key sent: %v); want once, under the paused call's key",
			calls, applied, refunds.sawKey(paused.IdempotencyKey))
	}
	if o.err != nil || o.answer != "Refunded A-1001." || !strings.HasPrefix(llm.observations()["call_refund"], "refund A-1001: applied") {
		t.Errorf("the run ended with %v, answer %q; the model saw %v", o.err, o.answer, llm.observations())
	}
}

// Sibling of issue 32, item 2 (a resumed call that needed approval again
// asked no one on ADK): on Eino, a destructive refund whose granted attempt
// failed pauses again on the resume path, as a new interrupt for attempt
// 2, which the person sees and grants; the refund is then applied once.
func TestAResumedEinoCallThatNeedsApprovalAgainAsksSomeone(t *testing.T) {
	var refunds effects
	var mu sync.Mutex
	sent := 0 // requests to the refunds upstream; the first one fails
	flaky, err := utils.InferTool("refund", "Refunds an order.", func(ctx context.Context, in orderArgs) (string, error) {
		mu.Lock()
		sent++
		fail := sent == 1
		mu.Unlock()
		if fail {
			return "", middleware.Transient(errors.New("connection reset"))
		}
		return "refund " + in.Order + ": " + refunds.apply(middleware.IdempotencyKey(ctx)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	grants := approval.NewGrants()
	refund, err := einotools.New(context.Background(), flaky, toolsafe.WithApproval(grants, approval.ApproveEachAttempt),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), retryPolicy(2))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_refund", "refund", `{"order":"A-1001"}`)), answer("Refunded A-1001."))
	r := runner(t, llm, newStore(), []tool.BaseTool{refund})
	id, first := onlyPause(t, drive(r.Query(context.Background(), "refund A-1001", adk.WithCheckPointID("cp"))))
	if first.Attempt != 1 {
		t.Fatalf("the first pause is %+v; want attempt 1", *first)
	}

	grants.Grant(first.Tool, first.Input)
	iter, err := r.ResumeWithParams(context.Background(), "cp", &adk.ResumeParams{Targets: map[string]any{id: nil}})
	if err != nil {
		t.Fatal(err)
	}
	id2, again := onlyPause(t, drive(iter))
	if again.Attempt != 2 || again.CallID != "call_refund" || again.IdempotencyKey != first.IdempotencyKey || id2 == id {
		t.Fatalf("after the granted attempt failed, the run paused as %+v (interrupt %s); want a new interrupt for attempt 2 under the same key", *again, id2)
	}
	mu.Lock()
	n := sent
	mu.Unlock()
	if _, applied := refunds.counts(); n != 1 || applied != 0 {
		t.Fatalf("%d refunds applied from %d requests before the retry was granted; want 0 from the 1 that failed", applied, n)
	}

	grants.Grant(again.Tool, again.Input)
	iter, err = r.ResumeWithParams(context.Background(), "cp", &adk.ResumeParams{Targets: map[string]any{id2: nil}})
	if err != nil {
		t.Fatal(err)
	}
	o := drive(iter)
	mu.Lock()
	n = sent
	mu.Unlock()
	if _, applied := refunds.counts(); n != 2 || applied != 1 || !refunds.sawKey(first.IdempotencyKey) {
		t.Errorf("%d refunds applied from %d requests; want 1 from 2 (the failed attempt and the granted retry), under the paused key", applied, n)
	}
	if o.err != nil || o.interrupt != nil || o.answer != "Refunded A-1001." || !strings.HasPrefix(llm.observations()["call_refund"], "refund A-1001: applied") {
		t.Errorf("the run ended with %v (paused: %v), answer %q; the model saw %v", o.err, o.interrupt != nil, o.answer, llm.observations())
	}
}
