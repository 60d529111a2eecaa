package fallback_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

// The alternative takes other arguments: WithInput adapts them. The
// alternative is a wrapped tool of its own, with its own retries and gate.
func ExampleTo() {
	lookup := middleware.Func("lookup_ticket", `Input: {"id":"T-1042"}`, func(_ context.Context, input string) (string, error) {
		return "", middleware.NewToolError("no ticket for %s", input)
	})
	search := toolsafe.Wrap(middleware.Func("search_tickets", `Input: {"query":"..."}`, func(_ context.Context, input string) (string, error) {
		return "search got " + input, nil
	}))
	idToQuery := func(_ context.Context, input string) (string, error) {
		return strings.Replace(input, `"id"`, `"query"`, 1), nil
	}
	tool := toolsafe.Wrap(lookup, toolsafe.WithFallback(fallback.To(search, fallback.WithInput(idToQuery))))
	r := tool.Run(context.Background(), `{"id":"PAY-88"}`)
	fmt.Println(r.Fallback, r.Output)
	// Output:
	// search_tickets search got {"query":"PAY-88"}
}
