//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// The model's tool-call IDs reach Result.CallID and gen_ai.tool.call.id
// through a real OpenAI-functions agent and executor.
func TestCallIDsFromAnOpenAIFunctionsAgent(t *testing.T) {
	tm := testkit.NewRecorder(t)
	srv := toolsafetest.NewUpstream(billing.Handler())
	t.Cleanup(srv.Close)
	srv.Enqueue(billing.InvoicePath("INV-1002"), toolsafetest.Reset())

	var mu sync.Mutex
	var results []middleware.Result
	ids := toolsafe.NewCallIDs()
	invoice := toolsafe.Wrap(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}),
		toolsafe.WithCallIDs(ids),
		toolsafe.WithTracing(tm.Hook),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		}))

	model := toolsafetest.NewModel(
		// Two calls in one turn, the second one retried, then a third.
		toolsafetest.Calls(
			toolsafetest.ToolCall{Tool: "fetch_invoice", Arguments: `{"number":"INV-1001"}`, ID: "call_A1"},
			toolsafetest.ToolCall{Tool: "fetch_invoice", Arguments: `{"number":"INV-1002"}`, ID: "call_B2"}),
		toolsafetest.Calls(toolsafetest.ToolCall{Tool: "fetch_invoice", Arguments: `{"number":"7"}`, ID: "call_C3"}),
		toolsafetest.Answer("INV-1001 is paid, INV-1002 is overdue; 7 is not an invoice number."),
	)
	agent := agents.NewOpenAIFunctionsAgent(model, []tools.Tool{invoice})
	exec := agents.NewExecutor(agent, agents.WithCallbacksHandler(ids), agents.WithMaxIterations(5))
	out, err := exec.Call(context.Background(), map[string]any{"input": "What about INV-1001, INV-1002 and 7?"})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, _ := out["output"].(string); !strings.Contains(got, "overdue") {
		t.Errorf("output %q", got)
	}

	var got []string
	for _, r := range results {
		got = append(got, r.CallID)
	}
	if want := []string{"call_A1", "call_B2", "call_C3"}; !slices.Equal(got, want) {
		t.Fatalf("Result.CallID %v; want %v", got, want)
	}
	if results[1].Attempts != 2 {
		t.Errorf("call_B2 made %d attempts; want 2", results[1].Attempts)
	}

	var spanIDs []string
	ended := tm.Spans.Ended()
	slices.SortFunc(ended, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	for _, s := range ended {
		if !strings.HasPrefix(s.Name(), "execute_tool ") {
			continue
		}
		v, _ := testkit.Attr(s.Attributes(), attribute.Key("gen_ai.tool.call.id"))
		spanIDs = append(spanIDs, v.AsString())
	}
	if want := []string{"call_A1", "call_B2", "call_C3"}; !slices.Equal(spanIDs, want) {
		t.Errorf("gen_ai.tool.call.id of the call spans %v; want %v", spanIDs, want)
	}
}

func TestCallIDs(t *testing.T) {
	echo := middleware.Func("Echo", "echoes", func(ctx context.Context, input string) (string, error) { return input, nil })
	action := func(id, tool, input string) schema.AgentAction {
		return schema.AgentAction{Tool: tool, ToolInput: input, ToolID: id}
	}

	t.Run("an announced ID is taken once, by the announced tool and input", func(t *testing.T) {
		ids := toolsafe.NewCallIDs()
		tool := toolsafe.Wrap(echo, toolsafe.WithCallIDs(ids))
		ctx := context.Background()

		ids.HandleAgentAction(ctx, action("call_1", "echo", "hi\nObservation:"))
		if r := tool.Run(ctx, "other input"); r.CallID == "call_1" {
			t.Errorf("a call with another input took the ID")
		}
		// The executor looks tools up case-insensitively and trims this suffix.
		if r := tool.Run(ctx, "hi"); r.CallID != "call_1" {
			t.Errorf("CallID %q; want call_1", r.CallID)
		}
		if r := tool.Run(ctx, "hi"); r.CallID == "call_1" || !strings.HasPrefix(r.CallID, "call_") {
			t.Errorf("a second call got %q; want a fresh random ID", r.CallID)
		}
	})

	t.Run("concurrent runs on different contexts keep their own IDs", func(t *testing.T) {
		ids := toolsafe.NewCallIDs()
		tool := toolsafe.Wrap(echo, toolsafe.WithCallIDs(ids))
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				id := fmt.Sprintf("call_%d", i)
				ids.HandleAgentAction(ctx, action(id, "Echo", "same input"))
				if r := tool.Run(ctx, "same input"); r.CallID != id {
					t.Errorf("run %d got %q; want %q", i, r.CallID, id)
				}
				ids.HandleAgentFinish(ctx, schema.AgentFinish{})
			})
		}
		wg.Wait()
	})

	t.Run("an action without an ID, or the agent's finish, drops the pending ID", func(t *testing.T) {
		ids := toolsafe.NewCallIDs()
		tool := toolsafe.Wrap(echo, toolsafe.WithCallIDs(ids))
		ctx := context.Background()
		ids.HandleAgentAction(ctx, action("call_1", "Echo", "x"))
		ids.HandleAgentAction(ctx, action("", "Echo", "x"))
		if r := tool.Run(ctx, "x"); r.CallID == "call_1" {
			t.Errorf("a stale ID was taken after an action without one")
		}
		ids.HandleAgentAction(ctx, action("call_2", "Echo", "x"))
		ids.HandleAgentFinish(ctx, schema.AgentFinish{})
		if r := tool.Run(ctx, "x"); r.CallID == "call_2" {
			t.Errorf("a stale ID was taken after the agent finished")
		}
	})
}

// A host that carries the call ID in the context (Eino, ADK) hands it over
// through WithCallIDFunc; it wins over the executor's announcement, and an
// empty answer leaves the call a made-up ID.
func TestWithCallIDFuncTakesTheIDFromTheContext(t *testing.T) {
	type idKey struct{}
	tool := toolsafe.Wrap(middleware.Func("lookup", "", func(ctx context.Context, _ string) (string, error) {
		return middleware.CallID(ctx), nil
	}), toolsafe.WithCallIDFunc(func(ctx context.Context) string { id, _ := ctx.Value(idKey{}).(string); return id }))
	r := tool.Run(context.WithValue(context.Background(), idKey{}, "call_from_host"), "{}")
	if r.CallID != "call_from_host" || r.Output != "call_from_host" {
		t.Errorf("Result.CallID %q, the tool saw %q; want call_from_host for both", r.CallID, r.Output)
	}
	r = tool.Run(context.Background(), "{}")
	if !strings.HasPrefix(r.CallID, "call_") || r.CallID == "call_from_host" {
		t.Errorf("without an ID in the context, Result.CallID = %q; want a made-up call_ ID", r.CallID)
	}
}
