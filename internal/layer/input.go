package layer

import (
	"context"

	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/middleware"

	"github.com/tmc/langchaingo/tools"
)

// CheckText refuses, with args-invalid and before any layer inside it
// (gate, run ledger, loop guard, attempt), an input that canonical.CheckText
// refuses: bytes that are not UTF-8 (RFC 8259 §8.1) or JSON with a lone
// surrogate escape, which Go would read as U+FFFD, so that two different
// inputs would match one grant or one ledger record. Every tool has it.
func CheckText() middleware.Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			if err := canonical.CheckText(input); err != nil {
				return "", err
			}
			return next.Call(ctx, input)
		})
	}
}
