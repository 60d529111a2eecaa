package main

import (
	"fmt"
	"github.com/toolsafe/toolsafe/argschema"
	"log/slog"
	"os"
	"time"

	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/temporaltools"
	"github.com/toolsafe/toolsafe/toolcall"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// What the driver tells the worker process it starts.
const (
	roleEnv     = "TOOLSAFE_EXAMPLE_ROLE" // "worker": run as the worker
	addressEnv  = "TEMPORAL_ADDRESS"      // the Temporal server
	upstreamEnv = "BILLING_URL"           // the billing upstream
	queueEnv    = "TASK_QUEUE"
)

// workerMain runs the worker until it is interrupted (or killed): the
// agent workflow, the model activity and the two tools.
func workerMain() error {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(addressEnv), Logger: logger()})
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, os.Getenv(queueEnv), worker.Options{})
	if err := register(w, os.Getenv(upstreamEnv)); err != nil {
		return err
	}
	return w.Run(worker.InterruptCh())
}

// register registers on w what the agent needs, its tools calling the
// billing upstream at base.
func register(w worker.Worker, base string) error {
	// Both tools call one dependency: one breaker for it. The client opens
	// a connection per request, so that a reset reaches the tool.
	billingDown := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 5, Delay: 10 * time.Second})
	httpc := toolsafetest.NoKeepAliveClient()
	fetch, err := temporaltools.New(billing.FetchInvoice(base, httpc),
		toolsafe.WithTimeout(2*time.Second),
		toolsafe.WithCircuitBreaker(billingDown),
		toolsafe.WithArgs(fetchArgs),
	)
	if err != nil {
		return err
	}
	refund, err := temporaltools.New(refunds.Tool(base, httpc, true),
		toolsafe.WithTimeout(3*time.Second),
		toolsafe.WithCircuitBreaker(billingDown),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(temporaltools.Decisions(nil)),
		toolsafe.WithArgs(refundArgs),
	)
	if err != nil {
		return err
	}
	if err := temporaltools.Register(w, fetch, refund); err != nil {
		return err
	}
	m, err := newModel(billing.FetchInvoice(base, httpc), refunds.Tool(base, httpc, true))
	if err != nil {
		return err
	}
	w.RegisterWorkflowWithOptions(Agent, workflow.RegisterOptions{Name: agentWorkflow})
	w.RegisterActivityWithOptions(m.Next, activity.RegisterOptions{Name: modelActivity})
	return nil
}

// The tools' argument schemas: toolsafe checks each input against them,
// and a real model is offered them.
const (
	fetchSchema  = `{"type":"object","required":["number"],"properties":{"number":{"type":"string","description":"The invoice number, such as INV-1001."}}}`
	refundSchema = `{"type":"object","required":["order","amount_eur"],"properties":{"order":{"type":"string","description":"The order, such as A-1001."},"amount_eur":{"type":"number","exclusiveMinimum":0}}}`
)

// The schemas compiled once, for toolsafe.WithArgs; they are constants, so
// they compile (a test of this package would fail at start if not).
var fetchArgs, refundArgs = mustCompile(fetchSchema), mustCompile(refundSchema)

func mustCompile(schema string) *argschema.Schema {
	s, err := argschema.Compile([]byte(schema))
	if err != nil {
		panic("examples/temporal: a schema of the program is invalid: " + err.Error())
	}
	return s
}

// newModel returns the scripted model, or OpenAI's when OPENAI_API_KEY is
// set (OPENAI_MODEL picks the model), offered the two tools.
func newModel(fetch, refund tools.Tool) (*model, error) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		return &model{}, nil
	}
	var opts []openai.Option
	if m := os.Getenv("OPENAI_MODEL"); m != "" {
		opts = append(opts, openai.WithModel(m))
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("OPENAI_API_KEY is set but the OpenAI client could not start: %w", err)
	}
	defs, err := toolcall.Definitions(
		toolsafe.Wrap(fetch, toolsafe.WithArgs(fetchArgs)),
		toolsafe.Wrap(refund, toolsafe.WithArgs(refundArgs)),
	)
	if err != nil {
		return nil, err
	}
	return &model{llm: llm, tools: defs}, nil
}

// logger is the SDK's logger of the example's processes: WARN and above.
func logger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
