package mcptools_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(stdioServerEnv); mode != "" {
		// The test binary run again as a go-sdk MCP server over stdio (see
		// stdioServer).
		if err := serveStdio(mode, os.Getenv(stdioCountEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// The environment of the test binary run as a server: its mode, and the
// file each charge appends a line to (the upstream's own count).
const (
	stdioServerEnv = "MCPTOOLS_TEST_STDIO_SERVER"
	stdioCountEnv  = "MCPTOOLS_TEST_STDIO_COUNT"
)

// serveStdio serves one tool, charge, without annotations (so with side
// effects without a key), over stdio. Each call charges (a line in count),
// then, by mode: "internal" fails with a JSON-RPC internal error, "exit"
// exits, the connection broken after the charge, "exit-once" exits after
// the first charge a count records and answers the later ones, "ok"
// answers.
func serveStdio(mode, count string) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "charge", Description: "Charges a card.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f, err := os.OpenFile(count, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintln(f, "charged")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			switch mode {
			case "internal":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: secret}
			case "exit":
				os.Exit(3)
			case "exit-once":
				if b, err := os.ReadFile(count); err == nil && bytes.Count(b, []byte("\n")) == 1 {
					os.Exit(3)
				}
			}
			return text("charged"), nil
		})
	return server.Run(context.Background(), &mcp.StdioTransport{})
}
