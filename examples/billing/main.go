// Command billing is toolsafe's main demo: a langchaingo agent answers a
// question about several invoices through a fetch_invoice tool whose billing
// upstream, a real HTTP server on 127.0.0.1, resets connections, answers 429
// with Retry-After, and for one invoice never recovers. toolsafe retries
// what is transient, hands the model what it must fix, tells it when to stop,
// and the agent finishes.
//
//	go run ./examples/billing
//
// The model is scripted (langchaingo's llms/fake), so the demo runs offline.
// With OPENAI_API_KEY set it uses langchaingo's OpenAI client instead
// (OPENAI_MODEL picks the model).
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/examples/internal/tracetext"
	"github.com/toolsafe/toolsafe/examples/internal/transcript"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

const question = "What is the status of invoices INV-1001, 1002 and INV-2001?"

// script is what the scripted model answers, turn by turn.
var script = []string{
	"Thought: I need each invoice. First INV-1001.\nAction: fetch_invoice\nAction Input: {\"number\":\"INV-1001\"}",
	"Thought: Next the invoice the user called 1002.\nAction: fetch_invoice\nAction Input: {\"number\":\"1002\"}",
	"Thought: Invoice numbers look like INV-1001, so 1002 is INV-1002.\nAction: fetch_invoice\nAction Input: {\"number\":\"INV-1002\"}",
	"Thought: Now INV-2001.\nAction: fetch_invoice\nAction Input: {\"number\":\"INV-2001\"}",
	"Thought: The billing service failed for INV-2001 after several automatic attempts; I must not retry it myself.\n" +
		"Final Answer: INV-1001 (Acme Corp, 1250.00 EUR) is paid. INV-1002 (Globex, 980.50 EUR) is overdue. " +
		"INV-2001 could not be read: the billing service is unavailable right now, please ask again later.",
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "billing:", err)
		os.Exit(1)
	}
}

//go:embed policies.yaml
var policyFiles embed.FS

func run(ctx context.Context, w io.Writer) (err error) {
	// Spans go to OTEL_EXPORTER_OTLP_ENDPOINT (Jaeger) when it is set, and
	// are printed as a tree at the end otherwise.
	tr, err := tracetext.Setup(ctx, "toolsafe-billing")
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(w, "\ntrace:")
		if ferr := tr.Finish(context.Background(), w); err == nil {
			err = ferr
		}
	}()
	upstream := toolsafetest.NewUpstream(billing.Handler())
	defer upstream.Close()
	// INV-1001 is fetched after two connection resets and a 429 that asks
	// for one second; INV-2001's shard is down for good.
	upstream.Enqueue(billing.InvoicePath("INV-1001"), toolsafetest.Reset(), toolsafetest.Reset(), toolsafetest.TooMany("1"))
	upstream.Always(billing.InvoicePath("INV-2001"), toolsafetest.Reset())

	fmt.Fprintf(w, "toolsafe billing demo: upstream %s (resets, 429 with Retry-After, one invoice down for good)\n", upstream.URL())
	llm, which, err := model()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "model: %s\n", which)
	fmt.Fprintf(w, "question: %s\n", question)

	// Every request on a new connection: net/http would otherwise resend a
	// GET whose reused connection was reset, out of sight of the attempt
	// count this demo prints.
	client := toolsafetest.NoKeepAliveClient()
	var mu sync.Mutex
	n := 0
	policies, err := policyfile.LoadFS(policyFiles, "policies.yaml")
	if err != nil {
		return err
	}
	// The file says which tools are traced (tracing: true); the Hook, with
	// the demo's own tracer provider, comes from code.
	agentTools, err := policies.WithTracing(otelhook.New(otelhook.WithTracerProvider(tr.TracerProvider()))).With(
		toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
			mu.Lock()
			defer mu.Unlock()
			n++
			fmt.Fprintln(w)
			transcript.Print(w, n, r)
		}),
	).WrapAll(billing.FetchInvoice(upstream.URL(), client))
	if err != nil {
		return err
	}

	agent := agents.NewOneShotAgent(llm, agentTools)
	executor := agents.NewExecutor(agent, agents.WithMaxIterations(8))
	runCtx, end := tr.StartAgent(ctx, "billing")
	out, err := executor.Call(runCtx, map[string]any{"input": question})
	end()
	if err != nil {
		return fmt.Errorf("the agent run failed: %w", err)
	}
	fmt.Fprintf(w, "\nfinal answer: %v\n", out["output"])
	fmt.Fprintf(w, "upstream requests: %d\n", upstream.Requests(""))
	return nil
}

// model returns the scripted model, or OpenAI's when OPENAI_API_KEY is set.
func model() (llms.Model, string, error) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		return fake.NewFakeLLM(script), "scripted (llms/fake); set OPENAI_API_KEY to use OpenAI", nil
	}
	var opts []openai.Option
	name := "OpenAI default model"
	if m := os.Getenv("OPENAI_MODEL"); m != "" {
		opts = append(opts, openai.WithModel(m))
		name = "OpenAI " + m
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return nil, "", fmt.Errorf("OPENAI_API_KEY is set but the OpenAI client could not start: %w", err)
	}
	return llm, name, nil
}
