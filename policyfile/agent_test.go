package policyfile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// An argument that breaks the tool's args_schema reaches the model, through
// a real langchaingo executor, as an args-invalid observation that says
// what to fix, and nothing reaches the upstream.
func TestArgsInvalidFromTheSchemaReachesTheModel(t *testing.T) {
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	cfg := mustParse(t, `
tools:
  fetch_invoice:
    retries: 3
    timeout: 2s
    args_schema:
      type: object
      required: [number]
      additionalProperties: false
      properties:
        number: {type: string, pattern: "^INV-[0-9]+$"}
`)
	wrapped, err := cfg.WrapAll(billing.FetchInvoice(srv.URL(), toolsafetest.NoKeepAliveClient()))
	if err != nil {
		t.Fatal(err)
	}

	script := []string{
		"Thought: I need invoice 1002.\nAction: fetch_invoice\nAction Input: {\"invoice\": 1002}",
		"Thought: The argument is called number and is a string.\nAction: fetch_invoice\nAction Input: invoice 1002",
		"Thought: I cannot call it right; I will tell the user.\nFinal Answer: I could not look up invoice 1002.",
	}
	agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), wrapped)
	exec := agents.NewExecutor(agent, agents.WithMaxIterations(5), agents.WithReturnIntermediateSteps())
	out, err := exec.Call(context.Background(), map[string]any{"input": "What is the status of invoice 1002?"})
	if err != nil {
		t.Fatalf("the run was aborted: %v", err)
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(steps) != 2 {
		t.Fatalf("%d steps; want 2: %+v", len(steps), out)
	}
	for i, want := range []string{
		`fetch_invoice was not called: the input is invalid: argument "invoice" is not an argument of this tool; argument "number" is missing. Fix the input and call it again.`,
		`fetch_invoice was not called: the input is invalid: it is not JSON; send the arguments as one JSON object, such as {"number": …}. Fix the input and call it again.`,
	} {
		if got := steps[i].Observation; got != want {
			t.Errorf("observation %d:\n got %q\nwant %q", i+1, got, want)
		}
	}
	if n := srv.Requests(""); n != 0 {
		t.Errorf("%d requests reached the upstream; want 0", n)
	}
	if got, _ := out["output"].(string); !strings.Contains(got, "could not look up") {
		t.Errorf("final answer %q", got)
	}
}
