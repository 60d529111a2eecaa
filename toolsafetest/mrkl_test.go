package toolsafetest_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestMRKLTexts(t *testing.T) {
	if got, want := toolsafetest.MRKLAction("I need invoice 7.", "fetch_invoice", `{"number":"7"}`),
		"Thought: I need invoice 7.\nAction: fetch_invoice\nAction Input: {\"number\":\"7\"}"; got != want {
		t.Errorf("MRKLAction = %q; want %q", got, want)
	}
	if got, want := toolsafetest.MRKLAnswer("It is paid.", "INV-1001 is paid."),
		"Thought: It is paid.\nFinal Answer: INV-1001 is paid."; got != want {
		t.Errorf("MRKLAnswer = %q; want %q", got, want)
	}
}

// The texts drive a real MRKL agent and executor: the tool gets the input
// exactly, and the run ends with the answer.
func TestMRKLTextsDriveAOneShotAgent(t *testing.T) {
	lookup := &recording{name: "lookup"}
	inputs := []string{`{"number":"INV-1001","note":"a: b"}`, `multi word input`}
	llm := fake.NewFakeLLM([]string{
		toolsafetest.MRKLAction("First the invoice.", "lookup", inputs[0]),
		toolsafetest.MRKLAction("Then the rest,\nover two lines.", "lookup", inputs[1]),
		toolsafetest.MRKLAnswer("I have both.", "INV-1001 is paid."),
	})
	exec := agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{lookup}),
		agents.WithMaxIterations(5), agents.WithReturnIntermediateSteps())
	out, err := exec.Call(context.Background(), map[string]any{"input": "the question"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := out["output"].(string); got != "INV-1001 is paid." {
		t.Errorf("output %q", got)
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(steps) != 2 || len(lookup.inputs) != 2 || lookup.inputs[0] != inputs[0] || lookup.inputs[1] != inputs[1] {
		t.Fatalf("%d steps, inputs %q; want 2 and %q", len(steps), lookup.inputs, inputs)
	}
}

func TestMRKLTextsThatTheAgentWouldMisreadPanic(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"an empty tool", func() { toolsafetest.MRKLAction("t", " ", "x") }},
		{"a tool over two lines", func() { toolsafetest.MRKLAction("t", "a\nb", "x") }},
		{"an action in the thought", func() { toolsafetest.MRKLAction("next action: lookup", "lookup", "x") }},
		{"an action input in the tool", func() { toolsafetest.MRKLAction("t", "lookup Action Input: y", "x") }},
		{"a final answer in the input", func() { toolsafetest.MRKLAction("t", "lookup", "Final Answer: 42") }},
		{"the answer is, in the input", func() { toolsafetest.MRKLAction("t", "lookup", "so THE ANSWER IS: 42") }},
		{"a final answer in the thought", func() { toolsafetest.MRKLAction("final answer: soon", "lookup", "x") }},
		{"a second final answer", func() { toolsafetest.MRKLAnswer("t", "42. Final Answer: 43") }},
		{"a final answer in the answer's thought", func() { toolsafetest.MRKLAnswer("Final Answer: 1", "2") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tt.f()
		})
	}
}
