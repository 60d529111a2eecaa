// Command fallback shows toolsafe's fallbacks: a langchaingo agent answers
// two support questions through tools whose upstream, a real HTTP server on
// 127.0.0.1, cannot answer them directly.
//
//   - lookup_ticket knows tickets by ID only; asked for an old reference it
//     answers "not found" (a tool-error). Its fallback, search_tickets, gets
//     the reference as a query (the input is adapted) and finds the ticket.
//   - search_tickets' index answers 503 to every attempt after its first
//     request. Its fallback, search_archive, answers from the archive of
//     closed tickets, and the model is told the answer came from a fallback.
//
// Each alternative is a toolsafe tool of its own, with its own retries.
//
//	go run ./examples/fallback
//
// The model is scripted (langchaingo's llms/fake), so the demo runs offline.
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/examples/internal/tickets"
	"github.com/toolsafe/toolsafe/examples/internal/transcript"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

const question = "What happened to my refund, reference PAY-88? And is there a fix for the VPN dropping?"

// script is what the scripted model answers, turn by turn.
var script = []string{
	"Thought: PAY-88 looks like a ticket reference; I will look it up.\nAction: lookup_ticket\nAction Input: {\"id\":\"PAY-88\"}",
	"Thought: PAY-88 is ticket T-1042, waiting on finance. Now the VPN question.\nAction: search_tickets\nAction Input: {\"query\":\"VPN\"}",
	"Thought: The search index was down; the archive, possibly stale, lists two closed VPN tickets.\n" +
		"Final Answer: Your refund (PAY-88) is ticket T-1042, waiting on finance. For the VPN dropping every hour, " +
		"an archived ticket (T-0007) was fixed by the router firmware update; the live index was unavailable, so check that this still applies.",
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fallback:", err)
		os.Exit(1)
	}
}

//go:embed policies.yaml
var policyFiles embed.FS

func run(ctx context.Context, w io.Writer) error {
	upstream := toolsafetest.NewUpstream(tickets.Handler())
	defer upstream.Close()
	// The search index answers its first request, then 503 to every one.
	upstream.Enqueue(tickets.SearchPath, toolsafetest.Pass())
	upstream.Always(tickets.SearchPath, toolsafetest.Unavailable(""))

	fmt.Fprintf(w, "toolsafe fallback demo: upstream %s (the search index fails after its first request)\n", upstream.URL())
	fmt.Fprintf(w, "model: scripted (llms/fake)\nquestion: %s\n", question)

	// Every request on a new connection, so each attempt is a request the
	// upstream counts (net/http would silently resend a reset GET).
	client := toolsafetest.NoKeepAliveClient()
	p := &printer{w: w}
	policies, err := policyfile.LoadFS(policyFiles, "policies.yaml")
	if err != nil {
		return err
	}
	// The search takes a query, not an ID: the adapter comes from code.
	policies = policies.WithFallbackOptions("lookup_ticket", fallback.WithInput(tickets.IDToQuery)).With(p.options()...)
	wrapped, err := policies.WrapAll(tickets.Lookup(upstream.URL(), client), tickets.Search(upstream.URL(), client),
		tickets.SearchArchive(upstream.URL(), client))
	if err != nil {
		return err
	}
	lookup, search := wrapped[0], wrapped[1] // the model gets these two; the archive only as a fallback

	agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), []tools.Tool{lookup, search})
	out, err := agents.NewExecutor(agent, agents.WithMaxIterations(5)).Call(ctx, map[string]any{"input": question})
	if err != nil {
		return fmt.Errorf("the agent run failed: %w", err)
	}
	fmt.Fprintf(w, "\nfinal answer: %v\n", out["output"])
	fmt.Fprintf(w, "upstream requests: lookup %d, search %d, archive %d\n",
		upstream.Requests(tickets.TicketPath("PAY-88")), upstream.Requests(tickets.SearchPath), upstream.Requests(tickets.ArchiveSearchPath))
	return nil
}

// printer prints each tool call once it ends. A fallback's call ends
// before the call that routed to it, so calls made inside another are kept
// and printed under it.
type printer struct {
	w      io.Writer
	n      int
	depth  int      // calls in progress (the agent calls one tool at a time)
	inputs []string // the input of the call in progress at each depth
	inner  []string // what the calls inside the current one printed
}

// options track the nesting of calls and print each result.
func (p *printer) options() []toolsafe.Option {
	track := func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			p.inputs = append(p.inputs[:p.depth], input)
			p.depth++
			defer func() { p.depth-- }()
			return next.Call(ctx, input)
		})
	}
	return []toolsafe.Option{toolsafe.With(track), toolsafe.WithOnResult(p.print)}
}

// print runs when a call ends; p.depth is then the number of calls it ran
// inside.
func (p *printer) print(_ context.Context, r middleware.Result) {
	var b strings.Builder
	indent := strings.Repeat("    ", p.depth)
	if p.depth == 0 {
		p.n++
		fmt.Fprintf(&b, "\n[%d] %s %s (call %s)\n", p.n, r.Tool, p.inputs[0], r.CallID)
	} else {
		fmt.Fprintf(&b, "%s-> as the fallback: %s %s (call %s)\n", indent, r.Tool, p.inputs[p.depth], r.CallID)
	}
	fmt.Fprintf(&b, "%s    status: %s   attempts: %d   delays: %s   took: %s\n",
		indent, transcript.Status(r), r.Attempts, transcript.Delays(r.Delays), transcript.Took(r.Elapsed))
	if r.Fallback != "" {
		why := ""
		if r.Primary != nil {
			attempts := "1 attempt"
			if r.Primary.Attempts != 1 {
				attempts = fmt.Sprintf("%d attempts", r.Primary.Attempts)
			}
			why = fmt.Sprintf(", because %s failed (%s: %s) after %s",
				r.Tool, r.Primary.Kind, middleware.Reason(r.Primary.Cause), attempts)
		}
		fmt.Fprintf(&b, "%s    routed to the fallback: %s%s\n", indent, r.Fallback, why)
	}
	fmt.Fprintf(&b, "%s    observation: %s\n", indent, transcript.OneLine(r.Observation()))
	if p.depth > 0 {
		p.inner = append(p.inner, b.String())
		return
	}
	io.WriteString(p.w, b.String())
	for _, s := range p.inner {
		io.WriteString(p.w, s)
	}
	p.inner = nil
}
