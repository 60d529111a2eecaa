package mcptools_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/policy"
)

// The tools of an MCP server, wrapped with toolsafe: a failure meant for the
// model becomes its observation.
func ExampleList() {
	ctx := context.Background()
	// A server with one tool, on the SDK's in-memory transport.
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
	type args struct {
		City string `json:"city"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "forecast", Description: "Tells the weather of a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			if in.City != "Oslo" {
				return nil, nil, fmt.Errorf("no forecast for %s; try Oslo", in.City) // isError, for the model
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil, nil
		})
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	served, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer served.Wait()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	mcpTools, err := mcptools.List(ctx, session)
	if err != nil {
		fmt.Println(err)
		return
	}
	forecast := toolsafe.Wrap(mcpTools[0],
		toolsafe.WithArgs(mcptools.SchemaOf(mcpTools[0])),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.DefaultBackoff()}))
	for _, input := range []string{`{"city":"Oslo"}`, `{"city":"Atlantis"}`, `{"town":"Oslo"}`} {
		out, _ := forecast.Call(ctx, input)
		fmt.Println(out)
	}
	// Output:
	// sunny
	// no forecast for Atlantis; try Oslo
	// forecast was not called: the input is invalid: argument "city" is missing; argument "town" is not an argument of this tool. Fix the input and call it again.
}
