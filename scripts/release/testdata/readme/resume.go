// Package resume is the code around the README's paused run, resumed.
package resume

import (
	"context"
	"errors"

	"github.com/tmc/langchaingo/agents"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"
)

func _(ctx context.Context, runID string, executor *agents.Executor, inputs map[string]any, grants *approval.Grants) error {
	// README snippet
	return err
}
