package einotools_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/run"
)

// gate holds every call of a tool until it opens: when the refusal the test
// waits for arrives, or when more calls got in than the limit lets through
// (the test then fails, instead of hanging).
type gate struct {
	open    chan struct{}
	once    sync.Once
	entered atomic.Int32
	most    int32
}

func newGate(most int32) *gate { return &gate{open: make(chan struct{}), most: most} }

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) enter() {
	if g.entered.Add(1) > g.most {
		g.release()
	}
	<-g.open
}

// onRefusal opens g when a call ends with kind.
func (g *gate) onRefusal(kind middleware.Kind) toolsafe.Option {
	return toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		if r.Kind() == kind {
			g.release()
		}
	})
}

// heldLookup is an Eino tool whose calls wait at g.
func heldLookup(t *testing.T, g *gate) tool.InvokableTool {
	t.Helper()
	it, err := utils.InferTool("lookup", "Looks an order up.", func(_ context.Context, in orderArgs) (string, error) {
		g.enter()
		return "order " + in.Order + " found", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// parallelRun runs one model turn that makes calls at once through a
// ToolsNode with Middleware for policies, in a run scoped with run.With, and
// returns what the model saw by call ID.
func parallelRun(t *testing.T, policies string, g *gate, refusal middleware.Kind, cs ...string) map[string]string {
	t.Helper()
	f, err := policyfile.Parse([]byte(policies))
	if err != nil {
		t.Fatal(err)
	}
	ts := []tool.BaseTool{heldLookup(t, g)}
	mw, err := einotools.Middleware(context.Background(), f.With(g.onRefusal(refusal)), ts)
	if err != nil {
		t.Fatal(err)
	}
	msgs := calls()
	for i, args := range cs {
		msgs.ToolCalls = append(msgs.ToolCalls, toolCall(callName(i), "lookup", args))
	}
	llm := script(msgs, answer("done"))
	o := drive(runner(t, llm, newStore(), ts, mw).Query(run.With(context.Background(), "", nil), "look them up"))
	if o.err != nil || o.answer != "done" {
		t.Fatalf("the run ended with %v, answer %q", o.err, o.answer)
	}
	return llm.observations()
}

func callName(i int) string { return "call_" + string(rune('a'+i)) }

func count(seen map[string]string, part string) int {
	n := 0
	for _, s := range seen {
		if strings.Contains(s, part) {
			n++
		}
	}
	return n
}

func TestParallelCalls(t *testing.T) {
	// Identical calls that arrive together are one call: see
	// TestAnIdenticalCallInFlightIsMadeOnce.
	t.Run("the bulkhead counts calls that arrive together", func(t *testing.T) {
		g := newGate(1)
		seen := parallelRun(t, "version: 1\ndependencies:\n  orders: {concurrency: 1}\ntools:\n  lookup:\n    dependency: orders\n",
			g, middleware.KindBusy, `{"order":"A-1"}`, `{"order":"A-2"}`)
		if found := count(seen, "found"); found != 1 || len(seen) != 2 {
			t.Errorf("the model saw %v: want 1 answer and 1 refusal", seen)
		}
		if n := g.entered.Load(); n != 1 {
			t.Errorf("the tool was entered %d times, want 1", n)
		}
	})
}
