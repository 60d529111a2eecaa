package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe/mcptools"
)

type forecastArgs struct {
	City string `json:"city" jsonschema:"the city, such as Oslo"`
	Days int    `json:"days,omitempty" jsonschema:"how many days, 1 to 7"`
}

func forecastHandler(_ context.Context, _ *mcp.CallToolRequest, in forecastArgs) (*mcp.CallToolResult, any, error) {
	return text(fmt.Sprintf("%s: sunny for %d days", in.City, in.Days)), nil, nil
}

func TestList(t *testing.T) {
	t.Run("pages through tools/list, in the server's order", func(t *testing.T) {
		s := startServer(t, &mcp.ServerOptions{PageSize: 2}, func(srv *mcp.Server) {
			for _, n := range []string{"a", "b", "c", "d", "e"} {
				rawTool(srv, n, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(n), nil })
			}
		})
		ts, err := mcptools.List(context.Background(), s.session)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range ts {
			names = append(names, tool.Name())
		}
		if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(names, want) {
			t.Errorf("names %v; want %v", names, want)
		}
		if s.lists() != 3 {
			t.Errorf("%d tools/list requests; want 3 pages", s.lists())
		}
		if out, err := ts[3].Call(context.Background(), ""); err != nil || out != "d" {
			t.Errorf("calling d with no input: %q, %v", out, err)
		}
		if got := s.args("d"); len(got) != 1 || got[0] != "{}" {
			t.Errorf("an empty input sent %q; want {}", got)
		}
	})

	t.Run("a tool keeps its definition, description and input schema", func(t *testing.T) {
		s := startServer(t, nil, func(srv *mcp.Server) {
			mcp.AddTool(srv, &mcp.Tool{Name: "get.forecast", Title: "Forecast", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, forecastHandler)
		})
		tool := only(t, s, mcptools.WithRename(func(n string) string { return "weather_" + strings.ReplaceAll(n, ".", "_") }))
		if tool.Name() != "weather_get_forecast" || tool.MCPName() != "get.forecast" || tool.Description() != "Forecast" {
			t.Errorf("name %q, MCP name %q, description %q", tool.Name(), tool.MCPName(), tool.Description())
		}
		if !tool.Definition().Annotations.ReadOnlyHint {
			t.Error("the annotations were lost")
		}
		var schema map[string]any
		if err := json.Unmarshal(tool.ArgsSchema(), &schema); err != nil {
			t.Fatal(err)
		}
		if props, _ := schema["properties"].(map[string]any); props["city"] == nil || schema["type"] != "object" {
			t.Errorf("schema %s", tool.ArgsSchema())
		}
		if mcptools.SchemaOf(tool) != tool.Schema() || mcptools.SchemaOf(nil) != nil {
			t.Error("SchemaOf does not give the tool's schema")
		}
		out, err := tool.Call(context.Background(), `{"city":"Oslo","days":3}`)
		if err != nil || out != "Oslo: sunny for 3 days" {
			t.Errorf("renamed tool answered %q, %v", out, err)
		}
		if got := s.args("get.forecast"); len(got) != 1 {
			t.Errorf("the call did not go to the MCP name: %v", s.arguments)
		}
	})

	t.Run("WithFilter keeps the tools asked for", func(t *testing.T) {
		s := startServer(t, nil, func(srv *mcp.Server) {
			for _, n := range []string{"read", "write", "delete"} {
				rawTool(srv, n, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(n), nil })
			}
		})
		tool := only(t, s, mcptools.WithFilter(func(d *mcp.Tool) bool { return d.Name == "read" }))
		if tool.Name() != "read" {
			t.Errorf("kept %q", tool.Name())
		}
	})

	t.Run("refuses names equal but for case, and schemas it cannot check", func(t *testing.T) {
		s := startServer(t, nil, func(srv *mcp.Server) {
			rawTool(srv, "Search", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			rawTool(srv, "search", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			srv.AddTool(&mcp.Tool{Name: "remote", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		})
		ts, err := mcptools.List(context.Background(), s.session)
		if err == nil || ts != nil {
			t.Fatalf("tools %v, error %v", ts, err)
		}
		for _, want := range []string{`"Search" and 2 "search" have names that differ only in case`, `tool "remote": its input schema: argschema: the schema is not a valid JSON Schema`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		renamed, err := mcptools.List(context.Background(), s.session,
			mcptools.WithFilter(func(d *mcp.Tool) bool { return d.Name != "remote" }),
			mcptools.WithRename(func(n string) string {
				if n == "Search" {
					return "search_all"
				}
				return n
			}))
		if err != nil || len(renamed) != 2 {
			t.Errorf("renamed: %v, %v", renamed, err)
		}
		if _, err := mcptools.List(context.Background(), s.session, mcptools.WithRename(func(string) string { return "" })); err == nil || !strings.Contains(err.Error(), "made its name empty") {
			t.Errorf("an empty name: %v", err)
		}
	})

	t.Run("bad arguments are errors, not panics", func(t *testing.T) {
		if _, err := mcptools.List(context.Background(), nil); err == nil {
			t.Error("List with a nil session")
		}
		s := startServer(t, nil, func(*mcp.Server) {})
		if _, err := mcptools.New(nil, &mcp.Tool{Name: "x"}); err == nil {
			t.Error("New with a nil session")
		}
		if _, err := mcptools.New(s.session, nil); err == nil {
			t.Error("New with a nil definition")
		}
		if _, err := mcptools.New(s.session, &mcp.Tool{}); err == nil {
			t.Error("New with no name")
		}
		tool, err := mcptools.New(s.session, &mcp.Tool{Name: "free"})
		if err != nil || string(tool.ArgsSchema()) != `{"type":"object"}` {
			t.Errorf("a definition without a schema: %v, %s", err, tool.ArgsSchema())
		}
		var zero mcptools.Tool
		if _, err := zero.Call(context.Background(), "{}"); err == nil || !strings.Contains(err.Error(), "not made by mcptools.List") {
			t.Errorf("the zero Tool: %v", err)
		}
		var nilTool *mcptools.Tool
		if _, err := nilTool.Call(context.Background(), "{}"); err == nil || nilTool.Name() != "" || nilTool.ArgsSchema() != nil || nilTool.Definition() != nil {
			t.Error("a nil *Tool")
		}
	})
}
