// Package quickstart is the code around the README's Quick start.
package quickstart

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

func _(base string, client *http.Client, llm llms.Model) {
	// README snippet
	_ = agent
}
