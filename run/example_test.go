package run_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// An agent run that reaches a gated refund stops: the langchaingo executor
// returns the *approval.Required. Once a person grants it, a new run on the
// Resume context answers the calls that completed before the pause from
// the run's ledger, so the model may ask for them again and nothing is
// applied twice.
func ExampleResume() {
	var notes, refunds atomic.Int32
	note := toolsafe.Wrap(middleware.Func("add_note", "Adds a note to the order.", func(context.Context, string) (string, error) {
		notes.Add(1)
		return "noted", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(_ context.Context, input string) (string, error) {
		refunds.Add(1)
		return "refunded", nil
	}), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	ts := []tools.Tool{note, refund}
	turns := func() []toolsafetest.Turn { // the model asks for both, each run
		return []toolsafetest.Turn{
			toolsafetest.Calls(toolsafetest.ToolCall{Tool: "add_note", Arguments: `{"order":"A-1001","text":"refund asked"}`}),
			toolsafetest.Calls(toolsafetest.ToolCall{Tool: "refund", Arguments: `{"order":"A-1001"}`}),
			toolsafetest.Answer("A-1001 is refunded."),
		}
	}
	input := map[string]any{"input": "Refund order A-1001."}

	scoped := run.With(context.Background(), "", nil) // a run in the default ledger
	first := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(turns()...), ts))
	_, err := first.Call(scoped, input)
	var ar *approval.Required
	if !errors.As(err, &ar) {
		fmt.Println("unexpected:", err)
		return
	}
	fmt.Println("paused before", ar.Tool, ar.Input)

	grants.Grant(ar.Tool, ar.Input) // a person approved
	resumed := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(turns()...), ts))
	out, err := resumed.Call(run.Resume(context.Background(), ar), input)
	fmt.Println(out["output"], err)
	fmt.Println("notes added:", notes.Load(), "refunds:", refunds.Load())
	// Output:
	// paused before refund {"order":"A-1001"}
	// A-1001 is refunded. <nil>
	// notes added: 1 refunds: 1
}
