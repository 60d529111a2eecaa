package einotools_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile"
)

type order struct {
	Order string `json:"order" jsonschema:"description=the order number such as A-1001"`
}

func lookupOrder(_ context.Context, in order) (string, error) {
	if !strings.HasPrefix(in.Order, "A-") {
		return "", middleware.NewToolError("%q is not an order number: they look like A-1001", in.Order)
	}
	return "order " + in.Order + ": shipped", nil
}

// An Eino tool wrapped with toolsafe options, in a ToolsNode (an agent's
// ToolsConfig takes it the same way). A failure reaches the model as the
// tool's message, and the node, like the agent's run, goes on.
func Example() {
	ctx := context.Background()
	lookup, err := utils.InferTool("lookup_order", "Looks an order up.", lookupOrder)
	if err != nil {
		panic(err)
	}
	guarded, err := einotools.New(ctx, lookup,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2}),
		toolsafe.WithTimeout(2*time.Second))
	if err != nil {
		panic(err)
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{guarded}})
	if err != nil {
		panic(err)
	}
	answers, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "call_1", Function: schema.FunctionCall{Name: "lookup_order", Arguments: `{"order":"A-1001"}`}},
		{ID: "call_2", Function: schema.FunctionCall{Name: "lookup_order", Arguments: `{"order":"1001"}`}},
	}))
	if err != nil {
		panic(err)
	}
	for _, m := range answers {
		fmt.Println(m.ToolCallID, m.Content)
	}
	// Output:
	// call_1 order A-1001: shipped
	// call_2 "1001" is not an order number: they look like A-1001
}

// A policies file applied to a ToolsNode's tools by name: the middleware
// goes beside the tools in the node's config.
func ExampleMiddleware() {
	ctx := context.Background()
	lookup, err := utils.InferTool("lookup_order", "Looks an order up.", lookupOrder)
	if err != nil {
		panic(err)
	}
	policies, err := policyfile.Parse([]byte(`
version: 1
tools:
  lookup_order:
    retries: 2
    timeout: 2s
`))
	if err != nil {
		panic(err)
	}
	tools := []tool.BaseTool{lookup}
	mw, err := einotools.Middleware(ctx, policies, tools)
	if err != nil {
		panic(err)
	}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools: tools, ToolCallMiddlewares: []compose.ToolMiddleware{mw}})
	if err != nil {
		panic(err)
	}
	answers, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "call_1", Function: schema.FunctionCall{Name: "lookup_order", Arguments: `{"order":7}`}},
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(answers[0].Content)
	// Output:
	// lookup_order was not called: the input is invalid: argument "order" must be a string, not a number. Fix the input and call it again.
}
