package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// connect serves server on the SDK's in-memory transport and returns a
// client session on it, and a func that closes both.
func connect(ctx context.Context, server *mcp.Server) (*mcp.ClientSession, func()) {
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	served, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		panic(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		panic(err)
	}
	return session, func() { _ = session.Close(); _ = served.Wait() }
}

// Content that is not text reaches the model summarised, never dropped.
func Example_content() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "radar", Description: "Shows the rain radar of a city."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Rain over Bergen until 18:00."},
				&mcp.ImageContent{Data: bytes.Repeat([]byte{0}, 12<<10), MIMEType: "image/png"},
				&mcp.ResourceLink{URI: "file:///radar.pdf", Name: "radar.pdf", MIMEType: "application/pdf"},
			}}, nil, nil
		})
	session, done := connect(ctx, server)
	defer done()
	mcpTools, err := mcptools.List(ctx, session)
	if err != nil {
		panic(err)
	}
	out, err := mcpTools[0].Call(ctx, `{}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// Rain over Bergen until 18:00.
	// [image: image/png, 12 KB]
	// [resource link: file:///radar.pdf (radar.pdf, application/pdf)]
}

// What the model sees, and how many attempts are made, for each kind of
// answer: a result with isError (not retried), input the schema refuses
// (nothing is sent), an internal error (retried: the tool only reads, as
// its trusted server says), a closed session (not retried). The server's
// error text never reaches the model.
func Example_failures() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
	calls := 0
	server.AddTool(&mcp.Tool{Name: "forecast", Description: "Tells the weather of a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls++
			var in struct{ City string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			switch {
			case in.City != "Oslo":
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "No forecast for " + in.City + "; try Oslo."}}}, nil
			case calls == 2:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "dial tcp 10.0.0.7:5432: connection refused"}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny in Oslo."}}}, nil
		})
	session, done := connect(ctx, server)
	defer done()
	mcpTools, err := mcptools.List(ctx, session, mcptools.WithTrusted(true)) // its read-only hint loosens the guard
	if err != nil {
		panic(err)
	}
	forecast := toolsafe.Wrap(mcpTools[0], toolsafe.WithRetry(policy.Retry{MaxRetries: 2,
		Backoff: policy.Backoff{Base: time.Millisecond, Max: time.Millisecond, Multiplier: 1}}))
	show := func(input string) {
		r := forecast.Run(ctx, input)
		kind := "ok"
		if r.Failure != nil {
			kind = string(r.Failure.Kind)
		}
		fmt.Printf("%s, %d attempt(s): %s\n", kind, r.Attempts, r.Observation())
	}
	show(`{"city":"Atlantis"}`)
	show(`{"city":7}`)
	show(`{"city":"Oslo"}`) // the first attempt meets an internal error
	_ = session.Close()
	show(`{"city":"Oslo"}`)
	// Output:
	// tool-error, 1 attempt(s): No forecast for Atlantis; try Oslo.
	// args-invalid, 0 attempt(s): forecast was not called: the input is invalid: argument "city" must be a string, not a number. Fix the input and call it again.
	// ok, 2 attempt(s): Sunny in Oslo.
	// tool-failed, 1 attempt(s): forecast failed (its MCP session is closed) after 1 attempt. Do not call forecast again with the same input for this request; tell the user it is unavailable or use another tool.
}
