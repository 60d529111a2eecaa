package toolsafe_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/telemetry"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// A tool that never recovers: the call span carries the Kind and the
// message the model got, each attempt its own span.
func ExampleWithTracing() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	down := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New("billing API busy"))
	})
	invoice := toolsafe.Wrap(down,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{
			Base: time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))),
	)
	invoice.Run(context.Background(), `{"number":"INV-1001"}`)

	for _, s := range spans.Ended() {
		fmt.Printf("%s: %s %v\n", s.Name(), s.Status().Code, show(s, "error.type", otelhook.AttemptsKey))
	}
	// Output:
	// attempt 1: Error [error.type=tool-failed]
	// attempt 2: Error [error.type=tool-failed]
	// attempt 3: Error [error.type=tool-failed]
	// execute_tool fetch_invoice: Error [error.type=tool-failed toolsafe.attempts=3]
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

// show lists the values of keys among the span's attributes, in the order
// of keys.
func show(s sdktrace.ReadOnlySpan, keys ...attribute.Key) []string {
	var out []string
	for _, k := range keys {
		if v, ok := telemetry.Attr(s.Attributes(), k); ok {
			out = append(out, string(k)+"="+v.Emit())
		}
	}
	return out
}
