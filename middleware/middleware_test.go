package middleware_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestChainSkipsNilsAndKeepsNameAndDescription(t *testing.T) {
	var order []string
	mark := func(name string) middleware.Middleware {
		return func(next tools.Tool) tools.Tool {
			return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, in string) (string, error) {
				order = append(order, name)
				return next.Call(ctx, in)
			})
		}
	}
	tool := middleware.Chain(mark("outer"), nil, mark("inner"))(middleware.Func("lookup", "finds things", func(context.Context, string) (string, error) {
		order = append(order, "tool")
		return "found", nil
	}))
	out, err := tool.Call(context.Background(), "q")
	if out != "found" || err != nil || tool.Name() != "lookup" || tool.Description() != "finds things" {
		t.Errorf("Call = %q, %v; tool %q %q", out, err, tool.Name(), tool.Description())
	}
	if len(order) != 3 || order[0] != "outer" || order[1] != "inner" || order[2] != "tool" {
		t.Errorf("ran %v; want outer, inner, tool", order)
	}
	order = nil
	if out, _ := middleware.Chain()(tool).Call(context.Background(), "q"); out != "found" || len(order) != 3 {
		t.Errorf("Chain() of the chained tool answered %q and ran %v; want it as it was", out, order)
	}
}

func TestFuncWithoutACallAnswersNothing(t *testing.T) {
	out, err := middleware.Func("noop", "", nil).Call(context.Background(), "x")
	if out != "" || err != nil {
		t.Errorf("Call = %q, %v; want \"\", nil", out, err)
	}
}
