package temporaltools_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/temporaltools"
)

// A workflow calls a tool through a Run: the tool's error reaches the
// model as toolsafe's message, as the activity's result, not retried.
// (The SDK's test environment stands in for a worker and a server here.)
func Example() {
	lookup := middleware.Func("fetch_invoice", "Fetches an invoice by its number.", func(_ context.Context, input string) (string, error) {
		return "", middleware.NewToolError("invoice %s does not exist; check the number with the user.", input)
	})
	tool, err := temporaltools.New(lookup)
	if err != nil {
		panic(err)
	}
	agent := func(ctx workflow.Context) (string, error) {
		run, err := temporaltools.NewRun(ctx, temporaltools.RunOptions{})
		if err != nil {
			return "", err
		}
		res, err := run.Call(ctx, "fetch_invoice", `"INV-9"`, "call-1")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s after %d attempt: %s", res.Status(), res.Kind, res.Attempts, res.Observation), nil
	}

	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a busy machine under -race
	if err := temporaltools.Register(env, tool); err != nil {
		panic(err)
	}
	env.RegisterWorkflowWithOptions(agent, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent")
	var out string
	if err := env.GetWorkflowResult(&out); err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// error tool-error after 1 attempt: invoice "INV-9" does not exist; check the number with the user.
}
