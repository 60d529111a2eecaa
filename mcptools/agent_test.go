package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/toolcall"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// weatherServer has a typed forecast tool (its schema inferred by the SDK)
// that fails its first call for each city with an internal error, and
// answers isError for a city that does not exist.
func weatherServer(t *testing.T) *testServer {
	var mu sync.Mutex
	seen := map[string]bool{}
	return startServer(t, nil, func(srv *mcp.Server) {
		mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Tells the weather of a city for the next days.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, _ *mcp.CallToolRequest, in forecastArgs) (*mcp.CallToolResult, any, error) {
				if in.City == "Atlantis" {
					r := text("No such city: Atlantis. Ask the user for a real city.")
					r.IsError = true
					return r, nil, nil
				}
				mu.Lock()
				first := !seen[in.City]
				seen[in.City] = true
				mu.Unlock()
				if first {
					return nil, nil, wireError(jsonrpc.CodeInternalError)
				}
				return text(fmt.Sprintf("%s: sunny, 4°C", in.City)), nil, nil
			})
	})
}

// A langchaingo OpenAI-functions agent, driven by a scripted model, uses an
// MCP server's tool through toolsafe: the transient failure is retried with
// the same arguments, the isError result reaches the model as its
// observation, and the run finishes.
func TestAgentUsesAnMCPTool(t *testing.T) {
	s := weatherServer(t)
	mcpTools, err := mcptools.List(context.Background(), s.session, trusted)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTracing(t)
	ids := toolsafe.NewCallIDs()
	var wrapped []tools.Tool
	for _, mt := range mcpTools {
		wrapped = append(wrapped, toolsafe.Wrap(mt, toolsafe.WithArgs(mcptools.SchemaOf(mt)),
			toolsafe.WithRetry(fast()), toolsafe.WithTimeout(5*time.Second), toolsafe.WithCallIDs(ids), toolsafe.WithTracing(tr.hook)))
	}
	model := toolsafetest.NewModel(
		toolsafetest.Calls(toolsafetest.ToolCall{Tool: "forecast", Arguments: `{"city":"Oslo","days":2}`}),
		toolsafetest.Calls(toolsafetest.ToolCall{Tool: "forecast", Arguments: `{"city":"Atlantis"}`}),
		toolsafetest.Calls(toolsafetest.ToolCall{Tool: "forecast", Arguments: `{"city":"Bergen","days":"two"}`}),
		toolsafetest.Answer("Oslo will be sunny; Atlantis is not a city."),
	)
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, wrapped),
		agents.WithCallbacksHandler(ids), agents.WithMaxIterations(6), agents.WithReturnIntermediateSteps())
	out, err := exec.Call(context.Background(), map[string]any{"input": "Weather in Oslo and Atlantis?"})
	if err != nil {
		t.Fatalf("the run was aborted: %v", err)
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	if len(steps) != 3 {
		t.Fatalf("%d steps; want 3", len(steps))
	}
	want := []string{
		"Oslo: sunny, 4°C",
		"No such city: Atlantis. Ask the user for a real city.",
		`forecast was not called: the input is invalid: argument "days" must be an integer, not a string. Fix the input and call it again.`,
	}
	for i, w := range want {
		if steps[i].Observation != w {
			t.Errorf("step %d: the model saw %q; want %q", i+1, steps[i].Observation, w)
		}
		if strings.Contains(steps[i].Observation, "SECRET") {
			t.Errorf("step %d: raw server text reached the model", i+1)
		}
	}
	if got := s.args("forecast"); len(got) != 3 || got[0] != got[1] || got[0] != `{"city":"Oslo","days":2}` {
		t.Errorf("the server got %q; want Oslo's arguments twice (one retry), then Atlantis, and nothing for the invalid call", got)
	}

	var callIDs []string
	for _, sp := range tr.spans.Ended() {
		if sp.Name() == "execute_tool forecast" {
			id, _ := attr(sp.Attributes(), "gen_ai.tool.call.id")
			callIDs = append(callIDs, id)
		}
	}
	slices.Sort(callIDs)
	if !slices.Equal(callIDs, []string{"call_1", "call_2", "call_3"}) {
		t.Errorf("call spans for %v", callIDs)
	}
}

// The definitions of an MCP server's tools carry their real schemas (here
// inferred by the SDK from a Go type), valid against the JSON Schema
// meta-schema; a scripted model's parallel calls are dispatched through the
// wrapped tools at once.
func TestDefinitionsAndDispatchOfMCPTools(t *testing.T) {
	s := weatherServer(t)
	mcpTools, err := mcptools.List(context.Background(), s.session, trusted)
	if err != nil {
		t.Fatal(err)
	}
	var wrapped []tools.Tool
	for _, mt := range mcpTools {
		wrapped = append(wrapped, toolsafe.Wrap(mt, toolsafe.WithArgs(mcptools.SchemaOf(mt)), toolsafe.WithRetry(fast())))
	}
	defs, err := toolcall.Definitions(wrapped...)
	if err != nil {
		t.Fatal(err)
	}
	params := defs[0].Function.Parameters.(map[string]any)
	raw, _ := json.Marshal(params)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := jsonschema.NewCompiler().Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.Validate(doc); err != nil {
		t.Errorf("the parameters %s break the meta-schema: %v", raw, err)
	}
	if props, _ := params["properties"].(map[string]any); params["type"] != "object" || props["city"] == nil || props["days"] == nil {
		t.Errorf("the parameters %s are not the tool's schema", raw)
	}

	model := toolsafetest.NewModel(toolsafetest.Calls(
		toolsafetest.ToolCall{ID: "c1", Tool: "forecast", Arguments: `{"city":"Oslo"}`},
		toolsafetest.ToolCall{ID: "c2", Tool: "forecast", Arguments: `{"city":"Atlantis"}`},
		toolsafetest.ToolCall{ID: "c3", Tool: "forecast", Arguments: `{"city":"Bergen"}`}))
	resp, err := model.GenerateContent(context.Background(), nil, llms.WithTools(defs))
	if err != nil {
		t.Fatal(err)
	}
	if offered := model.Requests()[0].Tools; len(offered) != 1 || offered[0].Function.Parameters == nil {
		t.Errorf("the model was offered %+v", offered)
	}
	results, err := toolcall.Dispatch(context.Background(), wrapped, resp.Choices[0].ToolCalls)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(results))
	for i, r := range results {
		got[i] = r.ToolCallID + ": " + r.Content
	}
	want := []string{"c1: Oslo: sunny, 4°C", "c2: No such city: Atlantis. Ask the user for a real city.", "c3: Bergen: sunny, 4°C"}
	if !slices.Equal(got, want) {
		t.Errorf("responses %q; want %q", got, want)
	}
	if n := s.calls(); n != 5 {
		t.Errorf("%d requests; want 5 (Oslo and Bergen retried once)", n)
	}
}
