// Command adk is toolsafe's demo for ADK for Go: an llmagent with ADK's
// runner and an in-memory session answers about invoices and refunds one,
// through ADK function tools that toolsafe wraps from a policies file
// (adktools.WrapAll). The billing upstream, a real HTTP server on
// 127.0.0.1, resets connections and answers 503; toolsafe retries what is
// transient, gives the model its own message for what it must fix or
// leave, and pauses the refund for the user's confirmation, which ADK asks
// for; the resumed call applies the refund once. The trace is printed.
//
//	go run -C examples/adk .
//
// The model is scripted (adktest), so the demo runs offline. With
// GOOGLE_API_KEY set it uses ADK's Gemini model instead (GOOGLE_MODEL picks
// it; gemini-2.5-flash by default), and the demo's user confirms every
// refund the model asks for.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/adktools/adktest"
	"github.com/toolsafe/toolsafe/examples/internal/transcript"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

const question = "What is the status of invoices INV-1001, 1002 and INV-2001? Then refund order A-1001 its 1250 EUR."

func invoice(id, number string) adktest.Turn {
	return adktest.Calls(adktest.Call{ID: id, Name: "fetch_invoice", Args: map[string]any{"number": number}})
}

// script is what the scripted model answers, turn by turn, over both runs.
var script = []adktest.Turn{
	invoice("call-1", "INV-1001"),
	invoice("call-2", "1002"), // not an invoice number: the model must fix it
	invoice("call-3", "INV-1002"),
	invoice("call-4", "INV-2001"), // its shard is down for good
	adktest.Calls(adktest.Call{ID: "call-5", Name: "refund", Args: map[string]any{"order": "A-1001", "amount_eur": 1250}}),
	// The run pauses for the user's confirmation; after it, the refund is made.
	adktest.Answer("INV-1001 (Acme Corp, 1250.00 EUR) is paid and its order A-1001 is refunded. " +
		"INV-1002 (Globex, 980.50 EUR) is overdue. INV-2001 could not be read: the billing service is unavailable, ask again later."),
}

func main() {
	if err := demo(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adk:", err)
		os.Exit(1)
	}
}

//go:embed policies.yaml
var policyFiles embed.FS

// spans records the demo's spans. ADK traces through the global provider.
var spans = tracetest.NewSpanRecorder()

func demo(ctx context.Context, w io.Writer) error {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	otel.SetTracerProvider(tp)

	bills := toolsafetest.NewUpstream(billing.Handler())
	defer bills.Close()
	bills.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Unavailable(""))
	bills.Always(billing.InvoicePath("INV-2001"), toolsafetest.Reset())
	ledger := refunds.NewLedger()
	refundsUp := toolsafetest.NewUpstream(ledger.Handler())
	defer refundsUp.Close()

	llm, which, err := chooseModel(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "toolsafe ADK demo: billing upstream %s (resets, 503, one invoice down for good)\n", bills.URL())
	fmt.Fprintf(w, "model: %s\nquestion: %s\n", which, question)

	tools, err := wrapTools(w, bills.URL(), refundsUp.URL())
	if err != nil {
		return err
	}
	if err := converse(ctx, w, llm, tools); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrefunds applied by the upstream: %d\n", ledger.Applied())
	fmt.Fprintln(w, "\ntrace:")
	return toolsafetest.WriteSpanTree(w, spans.Ended())
}

// wrapTools makes the ADK tools and wraps them with the policies file; each
// call's outcome is printed.
func wrapTools(w io.Writer, billsURL, refundsURL string) ([]tool.Tool, error) {
	policies, err := policyfile.LoadFS(policyFiles, "policies.yaml")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	n := 0
	policies = policies.WithApprover(adktools.Confirmations(nil)).With(
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			mu.Lock()
			defer mu.Unlock()
			n++
			fmt.Fprintln(w)
			transcript.Print(w, n, r)
		}))
	client := toolsafetest.NoKeepAliveClient()
	fetch, err := adkTool[invoiceArgs]("fetch_invoice", "Fetches one invoice by its number, such as INV-1001.",
		billing.FetchInvoice(billsURL, client).Call)
	if err != nil {
		return nil, err
	}
	refund, err := adkTool[refundArgs]("refund", "Refunds an order. Needs the user's confirmation.",
		refunds.Tool(refundsURL, client, true).Call)
	if err != nil {
		return nil, err
	}
	return adktools.WrapAll(policies, fetch, refund)
}

// converse runs the question, and once more after each pause with the
// user's answer, until the model answers.
func converse(ctx context.Context, w io.Writer, llm model.LLM, tools []tool.Tool) error {
	clerk, err := llmagent.New(llmagent.Config{Name: "clerk", Model: llm, Tools: tools,
		Instruction: "You answer questions about invoices and make refunds with the tools. Invoice numbers look like INV-1001."})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "billing", Agent: clerk, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		return err
	}
	// One agent run per session, however often it pauses: its calls are
	// kept in the run ledger, so a resumed run does not repeat them.
	runs := run.NewMemoryLedger()
	msg := genai.NewContentFromText(question, genai.RoleUser)
	for turn := 1; turn <= 5; turn++ {
		fmt.Fprintf(w, "\n== run %d\n", turn)
		var last *session.Event
		for ev, err := range r.Run(run.With(ctx, "session-1", runs), "user", "session-1", msg, agent.RunConfig{}) {
			if err != nil {
				return fmt.Errorf("the agent run failed: %w", err)
			}
			last = ev
		}
		reqs := adktools.Requests(last)
		if len(reqs) == 0 {
			fmt.Fprintf(w, "\nfinal answer: %s\n", text(last))
			return nil
		}
		for _, q := range reqs {
			fmt.Fprintf(w, "\nrun %d paused: ADK asks the user to confirm %s %s (call %s): %s\n",
				turn, q.Pause.Tool, q.Pause.Input, q.Pause.CallID, q.Pause.Reason)
		}
		fmt.Fprintln(w, "the user confirms; the session runs again")
		msg = adktools.Answer(reqs[0].ID, true)
	}
	return fmt.Errorf("the model did not finish in 5 runs")
}

func text(ev *session.Event) string {
	if ev == nil || ev.Content == nil {
		return ""
	}
	s := ""
	for _, p := range ev.Content.Parts {
		s += p.Text
	}
	return s
}

type invoiceArgs struct {
	Number string `json:"number" jsonschema:"the invoice number, such as INV-1001"`
}

type refundArgs struct {
	Order     string  `json:"order" jsonschema:"the order, such as A-1001"`
	AmountEUR float64 `json:"amount_eur" jsonschema:"the amount to refund, in EUR"`
}

// adkTool makes an ADK function tool of a tool body that takes its
// arguments as JSON and answers a JSON object: the bodies of the billing
// and refunds services the other demos share.
func adkTool[A any](name, desc string, body func(context.Context, string) (string, error)) (tool.Tool, error) {
	return functiontool.New(functiontool.Config{Name: name, Description: desc}, func(ctx agent.Context, a A) (map[string]any, error) {
		in, _ := json.Marshal(a)
		out, err := body(ctx, string(in))
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			return nil, err
		}
		return m, nil
	})
}

// chooseModel returns the scripted model, or Gemini when GOOGLE_API_KEY is set.
func chooseModel(ctx context.Context) (model.LLM, string, error) {
	key := os.Getenv("GOOGLE_API_KEY")
	if key == "" {
		return adktest.NewModel(script...), "scripted (adktest); set GOOGLE_API_KEY to use Gemini", nil
	}
	name := os.Getenv("GOOGLE_MODEL")
	if name == "" {
		name = "gemini-2.5-flash"
	}
	m, err := gemini.NewModel(ctx, name, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI})
	if err != nil {
		return nil, "", fmt.Errorf("GOOGLE_API_KEY is set but ADK's Gemini model could not start: %w", err)
	}
	return m, "Gemini " + name, nil
}
