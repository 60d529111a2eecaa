// Package inboxteam is the code around the README's approver groups,
// quorum and approval with changes.
package inboxteam

import (
	"errors"
	"log"
	"net/http"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/policyfile"
)

func _(refundTool tools.Tool, yourSession func(*http.Request) (string, bool), refundSchema *argschema.Schema, file *policyfile.File) {
	// README snippet
	_, _ = refund, h
}
