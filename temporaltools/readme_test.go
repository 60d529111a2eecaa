package temporaltools_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
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

// The README's Temporal snippet is the code between the markers below,
// which compiles with the package's tests.

// README:begin
// On each worker: every tool an activity, toolsafe's layers inside it.
func register(w worker.Worker, fetchInvoice, refunds tools.Tool, billing *policy.CircuitBreaker) error {
	fetch, err := temporaltools.New(fetchInvoice,
		toolsafe.WithTimeout(2*time.Second), // hard, per attempt: Temporal retries
		toolsafe.WithCircuitBreaker(billing))
	if err != nil {
		return err
	}
	refund, err := temporaltools.New(refunds,
		toolsafe.WithTimeout(3*time.Second),
		toolsafe.WithCircuitBreaker(billing),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), // sends the call's Idempotency-Key
		toolsafe.WithApproval(temporaltools.Decisions(nil)))     // a person decides, in the inbox
	if err != nil {
		return err
	}
	return temporaltools.Register(w, fetch, refund)
}

// In the workflow: the agent loop calls the tools through a Run.
func agent(ctx workflow.Context, question string) (string, error) {
	run, err := temporaltools.NewRun(ctx, temporaltools.RunOptions{Tools: []string{"fetch_invoice", "refund"}})
	if err != nil {
		return "", err
	}
	msgs := []message{{role: "user", text: question}}
	for {
		turn, err := nextTurn(ctx, msgs) // the model, as an activity
		if err != nil || turn.answer != "" {
			return turn.answer, err
		}
		for _, c := range turn.calls {
			res, err := run.Call(ctx, c.tool, c.input, c.id) // waits for approval if need be
			if err != nil {
				return "", err
			}
			msgs = append(msgs, message{role: "tool", callID: c.id, text: res.Observation})
		}
	}
}

// One inbox for the workflows' waits and the grants of runs elsewhere.
func approvals(c client.Client, grants *approval.Grants, signedIn func(*http.Request) (string, bool)) (http.Handler, error) {
	store, err := temporaltools.NewStore(c, temporaltools.StoreOptions{Others: []inbox.Store{inbox.Memory(grants)}})
	if err != nil {
		return nil, err
	}
	return inbox.New(store, signedIn)
}

// README:end

type message struct{ role, callID, text string }

type turn struct {
	calls  []struct{ id, tool, input string }
	answer string
}

func nextTurn(workflow.Context, []message) (turn, error) { return turn{answer: "done"}, nil }

func TestTheREADMESnippetIsCodeThatCompiles(t *testing.T) {
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "// README:begin\n")
	code, _, _ = strings.Cut(code, "\n// README:end")
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "<!-- temporaltools snippet: temporaltools/readme_test.go -->\n```go\n")
	block, _, _ = strings.Cut(block, "```")
	if strings.TrimSpace(block) != strings.TrimSpace(code) {
		t.Fatalf("the README's Temporal snippet is not the code of readme_test.go: copy it between the markers.\nREADME:\n%s\ncode:\n%s", block, code)
	}
	_ = register
	_ = agent
	_ = approvals
}
