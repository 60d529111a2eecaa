package mcptools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
)

// BenchmarkCall is one successful tools/call over the in-memory transport:
// the SDK's CallTool on its own, through mcptools (schema check, content),
// and through toolsafe with retry, attempt timeout and the schema checked
// before the attempt.
func BenchmarkCall(b *testing.B) {
	s := startServer(b, nil, func(srv *mcp.Server) {
		rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("sunny"), nil })
	})
	ts, err := mcptools.List(context.Background(), s.session)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const input = `{"city":"Oslo"}`
	b.Run("sdk", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: json.RawMessage(input)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcptools", func(b *testing.B) {
		for b.Loop() {
			if _, err := ts[0].Call(ctx, input); err != nil {
				b.Fatal(err)
			}
		}
	})
	wrapped := toolsafe.Wrap(ts[0], toolsafe.WithArgs(mcptools.SchemaOf(ts[0])), toolsafe.WithRetry(fast()), toolsafe.WithTimeout(time.Second))
	b.Run("toolsafe", func(b *testing.B) {
		for b.Loop() {
			if _, err := wrapped.Call(ctx, input); err != nil {
				b.Fatal(err)
			}
		}
	})
}
