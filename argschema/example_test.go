package argschema_test

import (
	"context"
	"fmt"

	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// A bad argument never reaches the tool: the model is told what to fix.
func ExampleValidate() {
	check, err := argschema.Validate([]byte(`{
		"type": "object",
		"required": ["query"],
		"properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	search := middleware.Func("search", "Searches invoices.", func(_ context.Context, input string) (string, error) {
		return "results for " + input, nil
	})
	tool := middleware.Chain(layer.Surface(), check)(search)

	out, _ := tool.Call(context.Background(), `{"limit": 500}`)
	fmt.Println(out)
	out, _ = tool.Call(context.Background(), `{"query": "late"}`)
	fmt.Println(out)
	// Output:
	// search was not called: the input is invalid: argument "limit" must be at most 50; argument "query" is missing. Fix the input and call it again.
	// results for {"query": "late"}
}
