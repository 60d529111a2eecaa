package middleware

import (
	"context"

	"github.com/tmc/langchaingo/tools"
)

// Middleware wraps a tool with more behaviour. It must return a tool with the
// same Name and Description.
type Middleware func(next tools.Tool) tools.Tool

// Chain composes middlewares into one. The first is outermost: Chain(a, b)(t)
// runs a, then b, then t. Chain() with no arguments returns the tool as is.
func Chain(mws ...Middleware) Middleware {
	return func(next tools.Tool) tools.Tool {
		for i := len(mws) - 1; i >= 0; i-- {
			if mws[i] != nil {
				next = mws[i](next)
			}
		}
		return next
	}
}

// Func makes a tools.Tool from a name, a description and a function. It is
// the adapter middlewares use to wrap a tool, and a quick way to write one.
// A nil call answers "" with no error.
func Func(name, description string, call func(ctx context.Context, input string) (string, error)) tools.Tool {
	return funcTool{name: name, description: description, call: call}
}

type funcTool struct {
	name, description string
	call              func(ctx context.Context, input string) (string, error)
}

var _ tools.Tool = funcTool{}

func (f funcTool) Name() string        { return f.name }
func (f funcTool) Description() string { return f.description }
func (f funcTool) Call(ctx context.Context, input string) (string, error) {
	if f.call == nil {
		return "", nil
	}
	return f.call(ctx, input)
}
