package middleware_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

func trace(label string) middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			fmt.Println(label, "before")
			defer fmt.Println(label, "after")
			return next.Call(ctx, input)
		})
	}
}

// The first middleware given to Chain is the outermost.
func ExampleChain() {
	echo := middleware.Func("echo", "echoes its input", func(_ context.Context, input string) (string, error) {
		fmt.Println("tool", input)
		return input, nil
	})
	tool := middleware.Chain(trace("first"), trace("second"))(echo)
	_, _ = tool.Call(context.Background(), "hi")
	// Output:
	// first before
	// second before
	// tool hi
	// second after
	// first after
}

// A semantic error reaches the model verbatim and is not retried.
func ExampleNewToolError() {
	err := middleware.NewToolError("invoice %s does not exist; check the number with the user.", "INV-9")
	kind, retryable := middleware.Classify(err)
	fmt.Println(kind, retryable)
	fmt.Println(err)
	// Output:
	// tool-error false
	// invoice INV-9 does not exist; check the number with the user.
}
