// Package replicas is the code around the README's "Many replicas".
package replicas

import (
	"context"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/run"
)

func _(ctx context.Context, fetchInvoice, refundTool tools.Tool, runID string) error {
	// README snippet
	_, _, _ = ctx, invoice, refund
	return nil
}
