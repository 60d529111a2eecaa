// Command eino is toolsafe's demo for Eino (github.com/cloudwego/eino): an
// Eino ChatModelAgent reads invoices and refunds an order through tools
// whose upstreams, real HTTP servers on 127.0.0.1, fail the way real ones
// do. einotools.Middleware applies policies.yaml to the agent's ToolsNode
// by tool name:
//
//   - The model's first turn asks for two invoices at once, and Eino runs
//     the calls in parallel. INV-1001's connection is reset twice: toolsafe
//     retries, and the model gets the invoice after 3 attempts. "1002" is
//     not an invoice number: the model gets the tool's message (a tool
//     error, not retried) with a nil error, so Eino's run goes on.
//
//   - The next turn fetches INV-1002 and refunds order A-1001. The refund
//     needs a person's approval: the run stops with an Eino interrupt whose
//     Info is an einotools.Pause, checkpointed with its sibling's answer.
//
//   - The person approves. A new runner, sharing only the checkpoint store
//     and the run ledger (as another process would), resumes from the
//     checkpoint; the refund continues under the paused call's idempotency
//     key. Its first attempt is applied upstream and its answer lost (the
//     connection is reset): the retry sends the same key, and the upstream
//     applies the refund once.
//
//     go run -C examples/eino .
//
// The model is scripted, so the demo runs offline. With OPENAI_API_KEY set
// it talks to OpenAI through eino-ext's model (OPENAI_MODEL picks the
// model), and the person approving is the program itself.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/examples/internal/tracetext"
	"github.com/toolsafe/toolsafe/examples/internal/transcript"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

const (
	question     = "What is the status of invoices INV-1001 and 1002? Then refund 25 EUR for order A-1001."
	checkpointID = "billing-question-1"
	runID        = "billing-run-1"
	maxPauses    = 3
)

//go:embed policies.yaml
var policyFiles embed.FS

func main() {
	if err := demo(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eino:", err)
		os.Exit(1)
	}
}

// stack is what a process builds to run the agent: the tools, the
// middleware that guards them, and the model.
type stack struct {
	tools []tool.BaseTool
	mw    compose.ToolMiddleware
	llm   model.ToolCallingChatModel
	store adk.CheckPointStore
}

func (s stack) runner(ctx context.Context) (*adk.Runner, error) {
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "billing", Description: "answers billing questions",
		Instruction: "Answer with the tools. Invoice numbers look like INV-1001. Do not repeat a call that failed for good.",
		Model:       s.llm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
			Tools: s.tools, ToolCallMiddlewares: []compose.ToolMiddleware{s.mw}}},
		MaxIterations: 8,
	})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: s.store}), nil
}

func demo(ctx context.Context, out io.Writer) (err error) {
	// The agent's events and the tools' results, which Eino's ToolsNode
	// runs in parallel, are printed from different goroutines.
	w := &lockedWriter{w: out}
	tr, err := tracetext.Setup(ctx, "toolsafe-eino")
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(w, "\ntrace:")
		if ferr := tr.Finish(context.Background(), w); err == nil {
			err = ferr
		}
	}()
	invoices := toolsafetest.NewUpstream(billing.Handler())
	defer invoices.Close()
	invoices.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Reset())
	ledger := refunds.NewLedger()
	refundsUp := toolsafetest.NewUpstream(ledger.Handler())
	defer refundsUp.Close()
	refundsUp.Enqueue(refunds.Path, toolsafetest.ApplyThenReset())
	fmt.Fprintf(w, "toolsafe Eino demo: billing upstream %s (INV-1001 resets twice), refunds upstream %s (the first answer is lost)\n",
		invoices.URL(), refundsUp.URL())

	llm, which, scripted, err := chatModel(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "model: %s\nquestion: %s\n", which, question)
	grants := approval.NewGrants()
	s, err := build(w, tr, grants, llm, invoices.URL(), refundsUp.URL())
	if err != nil {
		return err
	}
	answer, err := converse(ctx, w, tr, s, grants)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfinal answer: %s\n", answer)
	fmt.Fprintf(w, "invoice requests received upstream: %d\n", invoices.Requests(""))
	fmt.Fprintf(w, "refund requests received upstream: %d\n", refundsUp.Requests(refunds.Path))
	fmt.Fprintf(w, "refunds applied by the upstream: %d\n", ledger.Applied())
	if scripted && ledger.Applied() != 1 {
		return fmt.Errorf("the upstream applied %d refunds, want 1", ledger.Applied())
	}
	return nil
}

// build wraps the tools with the policies file and returns the stack.
func build(w io.Writer, tr *tracetext.Tracing, grants *approval.Grants, llm model.ToolCallingChatModel, invoicesURL, refundsURL string) (stack, error) {
	policies, err := policyfile.LoadFS(policyFiles, "policies.yaml")
	if err != nil {
		return stack{}, err
	}
	// No keep-alive: net/http would otherwise resend a request whose reused
	// connection was reset, out of sight of the attempt count shown here.
	client := toolsafetest.NoKeepAliveClient()
	ts := []tool.BaseTool{
		einoTool{billing.FetchInvoice(invoicesURL, client), map[string]*schema.ParameterInfo{
			"number": {Type: schema.String, Desc: "the invoice number, such as INV-1001", Required: true}}},
		einoTool{refunds.Tool(refundsURL, client, true), map[string]*schema.ParameterInfo{
			"order":      {Type: schema.String, Desc: "the order, such as A-1001", Required: true},
			"amount_eur": {Type: schema.Number, Desc: "the amount to refund, in EUR", Required: true}}},
	}
	var mu sync.Mutex
	n := 0
	mw, err := einotools.Middleware(context.Background(), policies.WithApprover(grants).With(
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tr.TracerProvider()))),
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			mu.Lock()
			defer mu.Unlock()
			n++
			var b strings.Builder // one Write, so that no line of the agent's comes between
			fmt.Fprintln(&b)
			transcript.Print(&b, n, r)
			_, _ = io.WriteString(w, b.String())
		})), ts)
	if err != nil {
		return stack{}, err
	}
	return stack{tools: ts, mw: mw, llm: announcing{llm, w}, store: newStore()}, nil
}

// converse runs the agent until it answers: each pause is approved by the
// person (here, the program), and a new runner resumes from the checkpoint.
func converse(ctx context.Context, w io.Writer, tr *tracetext.Tracing, s stack, grants *approval.Grants) (string, error) {
	r, err := s.runner(ctx)
	if err != nil {
		return "", err
	}
	// The run is scoped on the run ledger, so that a resumed run answers
	// the calls that completed before a pause instead of making them again.
	runCtx, end := tr.StartAgent(run.With(ctx, runID, run.DefaultLedger()), "billing")
	iter := r.Query(runCtx, question, adk.WithCheckPointID(checkpointID))
	for i := 0; ; i++ {
		answer, interrupt, err := drain(iter)
		end()
		if err != nil || interrupt == nil {
			return answer, err
		}
		pauses := einotools.Pauses(interrupt.InterruptContexts)
		if len(pauses) == 0 || i == maxPauses {
			return "", errors.New("the run was interrupted by something other than an approval, or too often")
		}
		targets := map[string]any{}
		for id, p := range pauses {
			fmt.Fprintf(w, "\nthe run pauses: %s %s needs approval (call %s, attempt %d): %s\n", p.Tool, p.Input, p.CallID, p.Attempt, p.Reason)
			grants.Grant(p.Tool, p.Input)
			targets[id] = nil
		}
		fmt.Fprintln(w, "the user approves; a new runner resumes from the checkpoint")
		if r, err = s.runner(ctx); err != nil {
			return "", err
		}
		runCtx, end = tr.StartAgent(run.With(ctx, runID, run.DefaultLedger()), "billing (resumed)")
		if iter, err = r.ResumeWithParams(runCtx, checkpointID, &adk.ResumeParams{Targets: targets}); err != nil {
			end()
			return "", err
		}
	}
}

// drain reads a run's events and returns the model's final answer, an
// interrupt or an error.
func drain(iter *adk.AsyncIterator[*adk.AgentEvent]) (answer string, interrupt *adk.InterruptInfo, err error) {
	for {
		ev, ok := iter.Next()
		if !ok {
			return answer, interrupt, err
		}
		if ev.Err != nil {
			err = fmt.Errorf("the agent run failed: %w", ev.Err)
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			interrupt = ev.Action.Interrupted
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil || ev.Output.MessageOutput.Role != schema.Assistant {
			continue
		}
		msg, merr := ev.Output.MessageOutput.GetMessage()
		if merr != nil || msg == nil {
			continue
		}
		if len(msg.ToolCalls) == 0 {
			answer = msg.Content
			continue
		}
		// The calls were printed by the model (announcing), before they ran.
	}
}

// einoTool is a tool of the demo's services as an Eino tool: the same call
// on the model's JSON arguments, with its parameters described for the
// model (and for toolsafe's argument check).
type einoTool struct {
	t      tools.Tool
	params map[string]*schema.ParameterInfo
}

func (e einoTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: e.t.Name(), Desc: e.t.Description(), ParamsOneOf: schema.NewParamsOneOfByParams(e.params)}, nil
}

func (e einoTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	return e.t.Call(ctx, args)
}

// lockedWriter writes to w one Write at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// store is an in-memory adk.CheckPointStore; a program that resumes in
// another process keeps checkpoints in a shared store.
type store struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newStore() *store { return &store{m: map[string][]byte{}} }

func (s *store) Set(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = append([]byte(nil), value...)
	return nil
}

func (s *store) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}
