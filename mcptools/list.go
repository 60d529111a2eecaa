package mcptools

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
)

// List returns the tools the server of session offers, as langchaingo
// tools (each a *Tool), in the order the server lists them. It pages through
// tools/list until the server's last page. The tools call the server through
// session, so they stop working when it is closed (they then report the
// closed session to the model).
//
// List returns an error, and no tools, when session is nil, tools/list fails
// (the error wraps the SDK's), or a tool cannot be made (see New); and when
// two tools' names are equal but for case, as langchaingo's executor looks
// tools up ignoring case, so one would shadow the other (rename them with
// WithRename, or drop one with WithFilter). The error names every such tool.
func List(ctx context.Context, session *mcp.ClientSession, opts ...Option) ([]tools.Tool, error) {
	if session == nil {
		return nil, errors.New("mcptools: the session is nil: pass the *mcp.ClientSession that client.Connect returned")
	}
	c := newConfig(opts)
	var out []tools.Tool
	var problems []error
	var names []string
	for def, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcptools: listing the server's tools: %w", err)
		}
		if c.filter != nil && !c.filter(def) {
			continue
		}
		t, err := newTool(session, def, c)
		if ctx.Err() != nil {
			// Compiling a server's schemas is bounded (see argschema.Compile),
			// but a server with many tools still answers to ctx.
			return nil, fmt.Errorf("mcptools: listing the server's tools: %w", context.Cause(ctx))
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		names = append(names, t.name)
		out = append(out, t)
	}
	if err := toolsafe.CheckNames(names...); err != nil {
		problems = append(problems, fmt.Errorf("mcptools: %w (use WithRename or WithFilter)", err))
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return out, nil
}
