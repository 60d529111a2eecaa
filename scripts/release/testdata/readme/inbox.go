// Package inbox is the code around the README's approvals inbox.
package inbox

import (
	"log"
	"net/http"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func _(refundTool tools.Tool, yourSession func(*http.Request) (string, bool), mux *http.ServeMux) {
	// README snippet
	_ = refund
}
