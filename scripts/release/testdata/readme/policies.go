// Package policies is the code around the README's "Policies in one file".
package policies

import (
	"log"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/policyfile"
)

func _(fetchInvoice, refundTool, search, archiveSearch tools.Tool, grants *approval.Grants, llm llms.Model) {
	// README snippet
	_ = agent
}
