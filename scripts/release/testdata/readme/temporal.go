// Package temporal is the code around the README's "Temporal": what its
// agent loop calls and passes.
package temporal

import (
	"net/http"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/temporaltools"
)

// README snippet

type message struct{ role, callID, text string }

type turn struct {
	calls  []struct{ id, tool, input string }
	answer string
}

func nextTurn(workflow.Context, []message) (turn, error) { return turn{answer: "done"}, nil }
