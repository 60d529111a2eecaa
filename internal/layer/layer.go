// Package layer holds the built-in layers of a toolsafe stack, the ones
// toolsafe.New orders around a tool that no public package owns: surface,
// the deadline, the side-effect guard, the approval gate, the hard
// attempt timeout, panic recovery, and Hold for the layers that keep a
// permit until a tool really returns. Each is a middleware.Middleware and
// records what it sees on the call record (package internal/call). The run
// ledger and the loop guard live with the runs they keep, in package run.
package layer

import (
	"context"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
)

// wrap returns a tool with next's name and description and the given call.
func wrap(next tools.Tool, f func(ctx context.Context, input string) (string, error)) tools.Tool {
	return middleware.Func(next.Name(), next.Description(), f)
}
