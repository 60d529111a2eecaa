package toolsafetest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

// actions records the actions the executor announces.
type actions struct {
	callbacks.SimpleHandler
	mu  sync.Mutex
	all []schema.AgentAction
}

func (a *actions) HandleAgentAction(_ context.Context, action schema.AgentAction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.all = append(a.all, action)
}

// recording is a tool that answers "seen " and its input, and records the
// inputs it got.
type recording struct {
	name   string
	mu     sync.Mutex
	inputs []string
}

func (r *recording) Name() string        { return r.name }
func (r *recording) Description() string { return "records its input" }
func (r *recording) Call(_ context.Context, input string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inputs = append(r.inputs, input)
	return "seen " + input, nil
}

func runFunctionsAgent(t *testing.T, m *toolsafetest.Model, ts []tools.Tool, h callbacks.Handler) (map[string]any, error) {
	t.Helper()
	opts := []agents.Option{agents.WithMaxIterations(5)}
	if h != nil {
		opts = append(opts, agents.WithCallbacksHandler(h))
	}
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(m, ts), opts...)
	return exec.Call(context.Background(), map[string]any{"input": "the question"})
}

func TestModelDrivesAnOpenAIFunctionsAgent(t *testing.T) {
	lookup := &recording{name: "lookup"}
	search := &recording{name: "search"}
	inputs := []string{
		`{"number":"INV-1001"}`,
		`{"q":"<a & b> \"quoted\"","n":2}`,
		`2 + 2`, // not JSON: still the exact input
	}
	m := toolsafetest.NewModel(
		toolsafetest.Calls(
			toolsafetest.ToolCall{Tool: "lookup", Arguments: inputs[0], ID: "call_A1"},
			toolsafetest.ToolCall{Tool: "search", Arguments: inputs[1]}),
		toolsafetest.Turn{Calls: []toolsafetest.ToolCall{{Tool: "LOOKUP", Arguments: inputs[2]}}, Text: "one more"},
		toolsafetest.Answer("done"),
	)
	seen := &actions{}
	out, err := runFunctionsAgent(t, m, []tools.Tool{lookup, search}, seen)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, _ := out["output"].(string); got != "done" {
		t.Errorf("output %q; want done", got)
	}

	t.Run("each tool gets its arguments exactly as scripted", func(t *testing.T) {
		if want := []string{inputs[0], inputs[2]}; !slices.Equal(lookup.inputs, want) {
			t.Errorf("lookup got %q; want %q", lookup.inputs, want)
		}
		if want := []string{inputs[1]}; !slices.Equal(search.inputs, want) {
			t.Errorf("search got %q; want %q", search.inputs, want)
		}
	})

	t.Run("the IDs reach the agent's actions, the empty ones made up in script order", func(t *testing.T) {
		var ids []string
		for _, a := range seen.all {
			ids = append(ids, a.ToolID)
		}
		if want := []string{"call_A1", "call_2", "call_3"}; !slices.Equal(ids, want) {
			t.Errorf("tool IDs %q; want %q", ids, want)
		}
		if !strings.Contains(seen.all[2].Log, "responded: one more") {
			t.Errorf("the text beside the calls is not in the agent's log: %q", seen.all[2].Log)
		}
	})

	t.Run("the model saw every observation, answering its call", func(t *testing.T) {
		var got []string
		for _, o := range m.Observations() {
			got = append(got, o.ToolCallID+": "+o.Content)
		}
		want := []string{"call_A1: seen " + inputs[0], "call_2: seen " + inputs[1], "call_3: seen " + inputs[2]}
		if !slices.Equal(got, want) {
			t.Errorf("observations\n got %q\nwant %q", got, want)
		}
	})

	t.Run("every request is recorded with the tools offered", func(t *testing.T) {
		reqs := m.Requests()
		if len(reqs) != 3 || m.Left() != 0 {
			t.Fatalf("%d requests, %d turns left; want 3 and 0", len(reqs), m.Left())
		}
		var names []string
		for _, f := range reqs[0].Functions {
			names = append(names, f.Name)
		}
		if !slices.Equal(names, []string{"lookup", "search"}) {
			t.Errorf("functions offered %q; want lookup, search", names)
		}
		if n := len(reqs[0].Messages); n != 2 {
			t.Errorf("the first request has %d messages; want the system prompt and the input", n)
		}
		// The agent echoes the earlier calls back with the tool's input,
		// unwrapped, as their arguments (langchaingo's scratchpad).
		var echoed []string
		for _, msg := range reqs[2].Messages {
			for _, p := range msg.Parts {
				if c, ok := p.(llms.ToolCall); ok {
					echoed = append(echoed, c.ID+" "+c.FunctionCall.Name+" "+c.FunctionCall.Arguments)
				}
			}
		}
		want := []string{"call_A1 lookup " + inputs[0], "call_2 search " + inputs[1], "call_3 LOOKUP " + inputs[2]}
		if !slices.Equal(echoed, want) {
			t.Errorf("calls echoed in the last request\n got %q\nwant %q", echoed, want)
		}
	})
}

// The arguments a real model sends for the agent's __arg1 schema.
func TestModelWrapsTheArgumentsInArg1(t *testing.T) {
	m := toolsafetest.NewModel(toolsafetest.Calls(toolsafetest.ToolCall{Tool: "search", Arguments: `{"q":"<a & b>"}`}))
	resp, err := m.GenerateContent(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0].ToolCalls[0]
	if c.Type != "function" || c.FunctionCall.Name != "search" || c.FunctionCall.Arguments != `{"__arg1":"{\"q\":\"<a & b>\"}"}` {
		t.Errorf("tool call %+v %+v", c, c.FunctionCall)
	}
}

func TestModelEndsOfScript(t *testing.T) {
	t.Run("a used-up script is an error the executor returns", func(t *testing.T) {
		m := toolsafetest.NewModel(toolsafetest.Calls(toolsafetest.ToolCall{Tool: "lookup", Arguments: "x"}))
		_, err := runFunctionsAgent(t, m, []tools.Tool{&recording{name: "lookup"}}, nil)
		if err == nil || !strings.Contains(err.Error(), "script of 1 turns is used up") {
			t.Fatalf("err = %v; want the script used up", err)
		}
		if n := len(m.Requests()); n != 2 {
			t.Errorf("%d requests recorded; want 2, the unanswered one too", n)
		}
	})
	t.Run("a turn's Err is the model's error", func(t *testing.T) {
		down := errors.New("model rate limited")
		m := toolsafetest.NewModel(toolsafetest.Turn{Err: down})
		if _, err := runFunctionsAgent(t, m, []tools.Tool{&recording{name: "lookup"}}, nil); !errors.Is(err, down) {
			t.Fatalf("err = %v; want %v", err, down)
		}
	})
	t.Run("an ended context uses no turn", func(t *testing.T) {
		m := toolsafetest.NewModel(toolsafetest.Answer("later"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := m.GenerateContent(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v; want context.Canceled", err)
		}
		if out, err := m.Call(context.Background(), "hi"); out != "later" || err != nil || m.Left() != 0 {
			t.Fatalf("Call = %q, %v with %d left; want the turn kept for it", out, err, m.Left())
		}
	})
	t.Run("NewModel leaves the caller's calls as they were", func(t *testing.T) {
		calls := []toolsafetest.ToolCall{{Tool: "lookup", Arguments: "x"}}
		toolsafetest.NewModel(toolsafetest.Calls(calls...))
		if calls[0].ID != "" {
			t.Errorf("the caller's ToolCall got ID %q", calls[0].ID)
		}
	})
	t.Run("before any request there is no observation", func(t *testing.T) {
		if obs := toolsafetest.NewModel().Observations(); obs != nil {
			t.Errorf("observations %v; want nil", obs)
		}
	})
}

// Many goroutines share one Model: every turn is answered exactly once.
func TestModelIsSafeForConcurrentUse(t *testing.T) {
	const n = 64
	var turns []toolsafetest.Turn
	for i := range n {
		turns = append(turns, toolsafetest.Answer(fmt.Sprint(i)))
	}
	m := toolsafetest.NewModel(turns...)
	answers := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			out, err := m.Call(context.Background(), "go")
			if err != nil {
				t.Error(err)
			}
			answers <- out
			_ = m.Requests()
			_ = m.Observations()
		})
	}
	wg.Wait()
	close(answers)
	seen := map[string]bool{}
	for a := range answers {
		if seen[a] {
			t.Errorf("turn %s answered twice", a)
		}
		seen[a] = true
	}
	if len(seen) != n || m.Left() != 0 || len(m.Requests()) != n {
		t.Errorf("%d distinct answers, %d left, %d requests; want %d, 0, %d", len(seen), m.Left(), len(m.Requests()), n, n)
	}
}

// A program's own loop offers tools with their real schemas (toolcall), so
// a real model answers the arguments as they are.
func TestModelSendsTheArgumentsAsTheyAreForOfferedTools(t *testing.T) {
	m := toolsafetest.NewModel(toolsafetest.Calls(toolsafetest.ToolCall{Tool: "search", Arguments: `{"q":"<a & b>"}`}))
	offered := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "search"}}}
	resp, err := m.GenerateContent(context.Background(), nil, llms.WithTools(offered))
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0].ToolCalls[0]; c.FunctionCall.Name != "search" || c.FunctionCall.Arguments != `{"q":"<a & b>"}` {
		t.Errorf("tool call %+v %+v; want the arguments as they are", c, c.FunctionCall)
	}
	if got := m.Requests()[0].Tools; len(got) != 1 || got[0].Function.Name != "search" {
		t.Errorf("Request.Tools = %+v; want the offered tool", got)
	}
}
