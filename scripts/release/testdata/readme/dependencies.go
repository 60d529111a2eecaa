// Package dependencies is the code around the README's "Dependencies,
// approvals, fallbacks".
package dependencies

import (
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

func _(refundTool tools.Tool, manualRefundTicket *toolsafe.Tool) {
	// README snippet
	_ = refund
}
