package toolsafetest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// getTool is a tool that GETs url with client and answers the body.
func getTool(name, url string, client *http.Client) tools.Tool {
	return middleware.Func(name, "Reads "+url, func(ctx context.Context, _ string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		return middleware.DoHTTP(client, req)
	})
}

// An upstream that resets the connection, then asks to wait, then answers:
// toolsafe's attempts are exactly the requests the upstream received.
func ExampleNewUpstream() {
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"number":"INV-1001","status":"paid"}`)
	}))
	defer up.Close()
	up.Enqueue("/invoices/INV-1001", toolsafetest.Reset(), toolsafetest.TooMany("0"))

	invoice := toolsafe.Wrap(getTool("fetch_invoice", up.URL()+"/invoices/INV-1001", toolsafetest.NoKeepAliveClient()),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
			Base: time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}))
	r := invoice.Run(context.Background(), "INV-1001")
	fmt.Println(r.Status(), "after", r.Attempts, "attempts;", up.Requests("/invoices/INV-1001"), "requests upstream")
	fmt.Println(r.Output)
	// Output:
	// ok after 3 attempts; 3 requests upstream
	// {"number":"INV-1001","status":"paid"}
}

// ApplyThenReset applies the side effect and loses the answer: the client
// sees a reset, and the upstream knows it charged.
func ExampleApplyThenReset() {
	var charged atomic.Int32
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		charged.Add(1)
		fmt.Fprint(w, "charged")
	}))
	defer up.Close()
	up.Enqueue("/charge", toolsafetest.ApplyThenReset())

	resp, err := toolsafetest.NoKeepAliveClient().Post(up.URL()+"/charge", "text/plain", strings.NewReader("42 EUR"))
	if err == nil {
		resp.Body.Close()
	}
	fmt.Println("reset:", errors.Is(err, syscall.ECONNRESET), "charged:", charged.Load())
	// Output:
	// reset: true charged: 1
}

// A seeded chaos: the same seed gives the same faults, request by request.
func ExampleUpstream_Chaos() {
	up := toolsafetest.NewUpstream(nil)
	defer up.Close()
	up.Chaos(2, toolsafetest.Chaos{TooMany: 0.3, Unavailable: 0.2, RetryAfter: "1"})

	client := toolsafetest.NoKeepAliveClient()
	var got []string
	for range 8 {
		resp, err := client.Get(up.URL() + "/search")
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		got = append(got, resp.Status[:3])
	}
	fmt.Println(strings.Join(got, " "))
	// Output:
	// 503 200 503 429 503 200 429 200
}

// A scripted model drives a real OpenAI-functions agent: two calls in one
// turn, then a final answer. The tool gets the arguments as scripted, its
// Result carries the model's tool-call ID (through toolsafe.CallIDs), and
// the model sees toolsafe's message for the failed call.
func ExampleNewModel() {
	lookup := middleware.Func("lookup_customer", "Looks a customer up by name.", func(_ context.Context, input string) (string, error) {
		if strings.Contains(input, "Initech") {
			return "", middleware.NewToolError("no customer is called Initech")
		}
		return "found " + input, nil
	})
	ids := toolsafe.NewCallIDs()
	tool := toolsafe.Wrap(lookup, toolsafe.WithCallIDs(ids),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			fmt.Println(r.CallID, r.Status()+":", r.Observation())
		}))

	model := toolsafetest.NewModel(
		toolsafetest.Calls(
			toolsafetest.ToolCall{Tool: "lookup_customer", Arguments: `{"name":"Acme"}`, ID: "call_A1"},
			toolsafetest.ToolCall{Tool: "lookup_customer", Arguments: `{"name":"Initech"}`, ID: "call_B2"}),
		toolsafetest.Answer("Acme is a customer; Initech is not."),
	)
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, []tools.Tool{tool}), agents.WithCallbacksHandler(ids))
	out, err := exec.Call(context.Background(), map[string]any{"input": "Are Acme and Initech customers?"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range model.Observations() {
		fmt.Printf("the model saw for %s: %s\n", o.ToolCallID, o.Content)
	}
	fmt.Println(out["output"])
	// Output:
	// call_A1 ok: found {"name":"Acme"}
	// call_B2 error: no customer is called Initech
	// the model saw for call_A1: found {"name":"Acme"}
	// the model saw for call_B2: no customer is called Initech
	// Acme is a customer; Initech is not.
}

// MRKLAction and MRKLAnswer write a MRKL agent's turns for llms/fake.
func ExampleMRKLAction() {
	echo := middleware.Func("fetch_invoice", "Fetches one invoice.", func(_ context.Context, input string) (string, error) {
		return "invoice " + input + " is paid", nil
	})
	llm := fake.NewFakeLLM([]string{
		toolsafetest.MRKLAction("I need the invoice.", "fetch_invoice", `{"number":"INV-1001"}`),
		toolsafetest.MRKLAnswer("It is paid.", "INV-1001 is paid."),
	})
	fmt.Println(toolsafetest.MRKLAction("I need the invoice.", "fetch_invoice", `{"number":"INV-1001"}`))
	exec := agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{toolsafe.Wrap(echo)}))
	out, err := exec.Call(context.Background(), map[string]any{"input": "Is INV-1001 paid?"})
	fmt.Println(out["output"], err)
	// Output:
	// Thought: I need the invoice.
	// Action: fetch_invoice
	// Action Input: {"number":"INV-1001"}
	// INV-1001 is paid. <nil>
}

// The spans of a call retried twice, as a tree.
func ExampleWriteSpanTree() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	calls := 0
	fetch := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		calls++
		if calls <= 2 {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return `{"number":"INV-1001","status":"paid"}`, nil
	})
	invoice := toolsafe.Wrap(fetch,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
			Base: 10 * time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))),
	)
	invoice.Run(context.Background(), `{"number":"INV-1001"}`)

	if err := toolsafetest.WriteSpanTree(os.Stdout, spans.Ended(), toolsafetest.WithoutDurations()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// execute_tool fetch_invoice  ok after 3 attempts
	//   attempt 1  tool-failed
	//   · retry after attempt 1, delay 10ms (tool-failed)
	//   attempt 2  tool-failed
	//   · retry after attempt 2, delay 20ms (tool-failed)
	//   attempt 3
}
