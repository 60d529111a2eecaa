package test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// A failing wrapped tool does not abort a real langchaingo run: the model
// gets the message as its observation and the agent finishes.
func TestExecutorSeesFailuresAsObservations(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	srv.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())

	bare := billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient())
	wrapped := toolsafe.Wrap(bare, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: testkit.Backoff(time.Millisecond)}))

	script := []string{
		toolsafetest.MRKLAction("I need invoice 7.", "fetch_invoice", `{"number":"7"}`),
		toolsafetest.MRKLAction("Numbers look like INV-1001; the user meant INV-1002.", "fetch_invoice", `{"number":"INV-1002"}`),
		toolsafetest.MRKLAnswer("The billing service is unavailable and retrying is pointless.", "I could not read invoice INV-1002: the billing service is unavailable."),
	}
	run := func(tool tools.Tool) (map[string]any, error) {
		agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), []tools.Tool{tool})
		exec := agents.NewExecutor(agent, agents.WithMaxIterations(5), agents.WithReturnIntermediateSteps())
		return exec.Call(context.Background(), map[string]any{"input": "What is the status of invoice 7?"})
	}

	// Without toolsafe the first failure aborts the whole run.
	if _, err := run(bare); err == nil {
		t.Fatal("the bare tool's error did not abort the run; the test no longer shows why toolsafe is needed")
	}

	out, err := run(wrapped)
	if err != nil {
		t.Fatalf("the run was aborted: %v", err)
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(steps) != 2 {
		t.Fatalf("%d steps; want 2: %+v", len(steps), out)
	}
	if got := steps[0].Observation; !strings.Contains(got, "is not an invoice number") {
		t.Errorf("step 1 observation %q; want the tool-error", got)
	}
	if got := steps[1].Observation; !strings.Contains(got, "fetch_invoice failed") || !strings.Contains(got, "3 attempts") {
		t.Errorf("step 2 observation %q; want the exhaustion message", got)
	}
	if got, _ := out["output"].(string); !strings.Contains(got, "unavailable") {
		t.Errorf("final answer %q", got)
	}
}
