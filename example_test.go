package toolsafe_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// A tool that is busy twice, then answers: Run shows the attempts and waits.
func ExampleWrap() {
	calls := 0
	flakyTool := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		calls++
		if calls <= 2 {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return `{"number":"INV-1001","status":"paid"}`, nil
	})
	invoice := toolsafe.Wrap(flakyTool,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
			Base: 10 * time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTimeout(2*time.Second),
	)
	r := invoice.Run(context.Background(), `{"number":"INV-1001"}`)
	fmt.Println(r.Status(), r.Attempts, r.Delays)
	fmt.Println(r.Observation())
	// Output:
	// ok 3 [10ms 20ms]
	// {"number":"INV-1001","status":"paid"}
}

// When the retries run out, Call gives the model a message, not an error:
// langchaingo's executor would abort the whole run on an error. The
// message says how long the automatic retries took (two delays of 500ms:
// about 1s, said to the nearest 100ms above a second).
func ExampleTool_Call() {
	down := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New("dial tcp 10.0.0.7:443: connect: connection refused"))
	})
	invoice := toolsafe.Wrap(down, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(500 * time.Millisecond)}))
	out, err := invoice.Call(context.Background(), "INV-1001")
	fmt.Println(err)
	fmt.Println(out)
	// Output:
	// <nil>
	// fetch_invoice failed after 3 attempts over 1s. These retries were automatic: do not call fetch_invoice again with the same input for this request; tell the user it is unavailable or use another tool.
}

// The OpenAI-functions agent's tool-call IDs reach the wrapped tool: give
// the same CallIDs to the executor, as its callbacks handler, and to the
// tools.
func ExampleCallIDs() {
	ids := toolsafe.NewCallIDs()
	echo := middleware.Func("lookup", "Looks a customer up.", func(_ context.Context, input string) (string, error) {
		return "found " + input, nil
	})
	lookup := toolsafe.Wrap(echo,
		toolsafe.WithCallIDs(ids),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			fmt.Println(r.Tool, r.CallID, r.Output)
		}))

	// A model that calls the tool once, then answers.
	model := toolsafetest.NewModel(
		toolsafetest.Calls(toolsafetest.ToolCall{Tool: "lookup", Arguments: `{"name":"Acme"}`, ID: "call_mszuSIzqtI65i1wAUOE8w5H4"}),
		toolsafetest.Answer("Acme is a customer."),
	)
	agent := agents.NewOpenAIFunctionsAgent(model, []tools.Tool{lookup})
	exec := agents.NewExecutor(agent, agents.WithCallbacksHandler(ids))
	out, err := exec.Call(context.Background(), map[string]any{"input": "Is Acme a customer?"})
	fmt.Println(out["output"], err)
	// Output:
	// lookup call_mszuSIzqtI65i1wAUOE8w5H4 found {"name":"Acme"}
	// Acme is a customer. <nil>
}
