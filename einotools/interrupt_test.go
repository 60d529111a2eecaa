package einotools_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/run"
)

// asksFirst is an Eino tool that interrupts the run itself on its first
// run, and answers once resumed.
type asksFirst struct{ runs atomic.Int32 }

func (*asksFirst) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "confirm", Desc: "asks the user to confirm"}, nil
}

func (a *asksFirst) InvokableRun(ctx context.Context, _ string, _ ...tool.Option) (string, error) {
	a.runs.Add(1)
	if was, _, _ := tool.GetInterruptState[any](ctx); !was {
		return "", tool.Interrupt(ctx, "please confirm")
	}
	return "confirmed", nil
}

func TestAToolsOwnInterruptReachesEino(t *testing.T) {
	a := &asksFirst{}
	w, err := einotools.New(context.Background(), a, retryPolicy(3), toolsafe.WithCallLimits(run.Limits{Identical: 3}))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "confirm", `{}`)), answer("done"))
	r := runner(t, llm, newStore(), []tool.BaseTool{w})
	ctx := run.With(context.Background(), "", nil)
	o := drive(r.Query(ctx, "go", adk.WithCheckPointID("cp-own")))
	if o.interrupt == nil || len(o.interrupt.InterruptContexts) != 1 || o.interrupt.InterruptContexts[0].Info != "please confirm" {
		t.Fatalf("want the tool's own interrupt, got %+v, error %v", o.interrupt, o.err)
	}
	if a.runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want 1: an interrupt is not retried", a.runs.Load())
	}
	iter, err := r.Resume(ctx, "cp-own")
	if err != nil {
		t.Fatal(err)
	}
	o = drive(iter)
	if o.err != nil || o.answer != "done" || llm.observations()["call_1"] != "confirmed" {
		t.Errorf("the resumed run ended with %v, answer %q, the model saw %v", o.err, o.answer, llm.observations())
	}
}
