package adktools_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/adktools/adktest"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

type lookupArgs struct {
	Number string `json:"number"`
}

// An ADK function tool that fails once with a transient error is retried
// inside one call of ADK's agent loop; the model never sees the failure.
func Example() {
	tries := 0
	lookup, _ := functiontool.New(functiontool.Config{Name: "fetch_invoice", Description: "Fetches one invoice."},
		func(ctx agent.Context, a lookupArgs) (map[string]any, error) {
			if tries++; tries == 1 {
				return nil, middleware.Transient(errors.New("billing API busy"))
			}
			return map[string]any{"number": a.Number, "status": "paid"}, nil
		})
	invoice := adktools.Wrap(lookup, // the tool.Tool functiontool.New returns
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{Base: time.Millisecond, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTimeout(2*time.Second),
		toolsafe.WithTracing(otelhook.New(otelhook.WithHostCallSpan())), // ADK starts the call span
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			fmt.Printf("%s %s: %s after %d attempts\n", r.Tool, r.CallID, r.Status(), r.Attempts)
		}),
	)

	model := adktest.NewModel( // a scripted model; a program gives a real one (gemini.NewModel)
		adktest.Calls(adktest.Call{ID: "call-1", Name: "fetch_invoice", Args: map[string]any{"number": "INV-1001"}}),
		adktest.Answer("INV-1001 is paid."))
	clerk, _ := llmagent.New(llmagent.Config{Name: "clerk", Model: model, Tools: []tool.Tool{invoice}})
	r, _ := runner.New(runner.Config{AppName: "billing", Agent: clerk, SessionService: session.InMemoryService(), AutoCreateSession: true})
	for ev, err := range r.Run(context.Background(), "user", "s1", genai.NewContentFromText("Is INV-1001 paid?", genai.RoleUser), agent.RunConfig{}) {
		if err == nil && ev.Content != nil && ev.Content.Parts[0].Text != "" {
			fmt.Println("model:", ev.Content.Parts[0].Text)
		}
	}
	// Output:
	// fetch_invoice call-1: ok after 2 attempts
	// model: INV-1001 is paid.
}
