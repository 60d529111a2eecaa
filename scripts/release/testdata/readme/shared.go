// Package shared is the code around the README's policies file shared by
// a fleet.
package shared

import (
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/redisstore"
)

func _(file *policyfile.File, store *redisstore.Store, fetchInvoice, refundTool tools.Tool) {
	// README snippet
	_, _ = agentTools, err
}
