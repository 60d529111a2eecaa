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
// tools (each a *Tool), in the order the server lists them, paging through
// tools/list. The tools call the server through session, and share it: with
// WithReconnect they start a new one when it is gone, else they report a
// closed session to the model once it is closed. It returns an error, and
// no tools, for a nil session, a failed tools/list (wrapping the SDK's
// error), a tool that cannot be made (see New), or two names equal but for
// case, which langchaingo's executor cannot tell apart (see WithRename and
// WithFilter); the error names every such tool.
func List(ctx context.Context, session *mcp.ClientSession, opts ...Option) ([]tools.Tool, error) {
	if session == nil {
		return nil, errNilSession
	}
	c := newConfig(opts)
	cn := newConn(session, c.reconnect)
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
		t, err := newTool(cn, def, c)
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
