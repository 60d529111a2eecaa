package einotools

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/policyfile"
)

// Middleware returns a ToolsNode middleware (compose.ToolsNodeConfig's
// ToolCallMiddlewares) that runs each call of the tools in ts through the
// policies f gives that tool by name, as New would. Pass every tool of the
// ToolsNode: a call of a tool not in ts, or of one by a name alias, ends the
// run with an error rather than run unguarded. Errors: every problem of
// f.WrapAll, and New's refusals. Safe for concurrent use.
func Middleware(ctx context.Context, f *policyfile.File, ts []tool.BaseTool) (compose.ToolMiddleware, error) {
	if f == nil {
		return compose.ToolMiddleware{}, errors.New("einotools: the policies file is nil: pass one from policyfile.Load")
	}
	adapters := make([]tools.Tool, 0, len(ts))
	var errs []error
	for _, t := range ts {
		a, _, err := adapt(ctx, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		adapters = append(adapters, a)
	}
	if len(errs) > 0 {
		return compose.ToolMiddleware{}, errors.Join(errs...)
	}
	wrapped, err := f.With(toolsafe.WithCallIDs(toolsafe.CallIDFunc(compose.GetToolCallID))).WrapAll(adapters...)
	if err != nil {
		return compose.ToolMiddleware{}, err
	}
	n := node{byName: make(map[string]*toolsafe.Tool, len(wrapped))}
	for _, w := range wrapped {
		n.byName[w.Name()] = w.(*toolsafe.Tool)
	}
	return compose.ToolMiddleware{
		Invokable:          n.invokable,
		Streamable:         n.streamable,
		EnhancedInvokable:  refuseEnhanced,
		EnhancedStreamable: refuseEnhancedStream,
	}, nil
}

// node is the guarded tools of one Middleware, by name.
type node struct {
	byName map[string]*toolsafe.Tool
}

func (n node) lookup(name string) (*toolsafe.Tool, error) {
	if g := n.byName[name]; g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("einotools: tool %q was not given to einotools.Middleware, so it has no policies: "+
		"pass every tool of the ToolsNode (name aliases are not supported)", name)
}

// through returns in with args, for the next endpoint.
func through(in *compose.ToolInput, args string) *compose.ToolInput {
	c := *in
	c.Arguments = args
	return &c
}

func (n node) invokable(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
	return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
		g, err := n.lookup(in.Name)
		if err != nil {
			return nil, err
		}
		out, err := call(ctx, g, in.Name, in.Arguments, func(ctx context.Context, args string) (string, error) {
			o, err := next(ctx, through(in, args))
			if err != nil || o == nil {
				return "", err
			}
			return o.Result, nil
		})
		if err != nil {
			return nil, err
		}
		return &compose.ToolOutput{Result: out}, nil
	}
}

// streamable guards a tool's stream as New does: read to its end inside
// each attempt, it reaches the model in one piece.
func (n node) streamable(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
	return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
		g, err := n.lookup(in.Name)
		if err != nil {
			return nil, err
		}
		out, err := call(ctx, g, in.Name, in.Arguments, func(ctx context.Context, args string) (string, error) {
			o, err := next(ctx, through(in, args))
			if err != nil || o == nil {
				return "", err
			}
			return readAll(o.Result)
		})
		if err != nil {
			return nil, err
		}
		return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{out})}, nil
	}
}

func enhancedError(name string) error {
	return fmt.Errorf("%w: tool %q is an enhanced tool (multimodal results), added to the ToolsNode after einotools.Middleware: "+
		"toolsafe guards tools whose result is text", ErrUnsupported, name)
}

func refuseEnhanced(compose.EnhancedInvokableToolEndpoint) compose.EnhancedInvokableToolEndpoint {
	return func(_ context.Context, in *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
		return nil, enhancedError(in.Name)
	}
}

func refuseEnhancedStream(compose.EnhancedStreamableToolEndpoint) compose.EnhancedStreamableToolEndpoint {
	return func(_ context.Context, in *compose.ToolInput) (*compose.EnhancedStreamableToolOutput, error) {
		return nil, enhancedError(in.Name)
	}
}
