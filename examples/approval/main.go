// Command approval shows toolsafe's approval gate and idempotency keys: a
// langchaingo agent refunds two orders through a refund tool on a real HTTP
// upstream on 127.0.0.1 that the program's user must approve, one attempt at
// a time.
//
//   - Run 1 pauses: the refund of order A-1001 waits for approval
//     (errors.As finds *approval.Required in the run's error). The
//     program lists what waits, the user grants it, and the run resumes.
//
//   - The first attempt reaches the upstream, which applies the refund and
//     then loses the answer (the connection is reset). The refund tool
//     sends the call's idempotency key, so a retry is safe, but the tool is
//     destructive: the retry pauses for an approval of its own, and the
//     user is told the first attempt may have been applied.
//
//   - Granted again, the resumed call re-sends the refund with the same key;
//     the upstream recognises it and applies nothing twice. Its own count of
//     applied refunds proves it: 1.
//
//   - The refund of order A-1002 is denied: the model is told so, and the
//     refund never reaches the upstream.
//
//   - Each resumed run asks for every refund of the request again, as a
//     real model does once the executor has dropped the paused turn. The
//     runs are one agent run, scoped with run.With: a refund that
//     completed before a pause is answered from the run ledger instead of
//     being sent again, so the upstream applies each refund once.
//
//     go run ./examples/approval
//
// The model is scripted (langchaingo's llms/fake), so the demo runs offline.
// langchaingo cannot resume a run, so each resumption runs the question
// again and the scripted model picks up where it stopped; a real program
// keeps the conversation in the agent's memory.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/examples/internal/transcript"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

const (
	question = "Refund 25 EUR for order A-1001 and 900 EUR for order A-1002."
	refund1  = `{"order":"A-1001","amount_eur":25}`
	refund2  = `{"order":"A-1002","amount_eur":900}`
)

// script is what the scripted model answers, turn by turn, over all runs.
var script = []string{
	// Run 1: pauses for approval.
	"Thought: Two refunds. First order A-1001.\nAction: refund\nAction Input: " + refund1,
	// Run 2: the first attempt is lost; the retry pauses for its own approval.
	"Thought: Two refunds. First order A-1001.\nAction: refund\nAction Input: " + refund1,
	// Run 3: the retry is re-sent with the same key, then A-1002 pauses.
	"Thought: Two refunds. First order A-1001.\nAction: refund\nAction Input: " + refund1,
	"Thought: A-1001 is refunded. Now order A-1002.\nAction: refund\nAction Input: " + refund2,
	// Run 4: the model asks for both refunds again; A-1001 completed before
	// the pause, so the run ledger answers it, and A-1002 was denied.
	"Thought: Two refunds. First order A-1001.\nAction: refund\nAction Input: " + refund1,
	"Thought: A-1001 is refunded. Now order A-1002.\nAction: refund\nAction Input: " + refund2,
	"Thought: The user denied the refund of A-1002; I must not ask again.\n" +
		"Final Answer: Order A-1001 was refunded 25 EUR. The 900 EUR refund for order A-1002 was not approved, so it was not made.",
}

// decisions is what the user answers to each pause, in order.
var decisions = []approval.Decision{approval.Approved, approval.Approved, approval.Denied}

func main() {
	if err := demo(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

//go:embed policies.yaml
var policyFiles embed.FS

func demo(ctx context.Context, w io.Writer) error {
	ledger := refunds.NewLedger()
	upstream := toolsafetest.NewUpstream(ledger.Handler())
	defer upstream.Close()
	// The first refund request is applied, then its connection is reset.
	upstream.Enqueue(refunds.Path, toolsafetest.ApplyThenReset())

	fmt.Fprintf(w, "toolsafe approval demo: upstream %s (the first refund's answer is lost)\n", upstream.URL())
	fmt.Fprintf(w, "model: scripted (llms/fake)\nquestion: %s\n", question)

	// No keep-alive: net/http would silently resend a request carrying an
	// Idempotency-Key whose reused connection was reset, out of sight.
	client := toolsafetest.NoKeepAliveClient()
	grants := approval.NewGrants()
	n := 0
	policies, err := policyfile.LoadFS(policyFiles, "policies.yaml")
	if err != nil {
		return err
	}
	wrapped, err := policies.WithApprover(grants).With(toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		n++
		transcript.Print(w, n, r)
	})).WrapAll(refunds.Tool(upstream.URL(), client, true))
	if err != nil {
		return err
	}
	refund := wrapped[0]

	llm := fake.NewFakeLLM(script)
	// One agent run, however often it pauses: its completed calls are kept in
	// the run ledger (an in-memory one of this run's own here; resuming on
	// runCtx keeps it), so a resumed run does not repeat them.
	runCtx := run.With(ctx, "refunds-for-A-1001-and-A-1002", run.NewMemoryLedger())
	decisions := decisions // this demo's turn through them: a second demo starts at the first
	for i := 1; ; i++ {
		fmt.Fprintf(w, "\n== run %d\n", i)
		agent := agents.NewOneShotAgent(llm, []tools.Tool{refund})
		out, err := agents.NewExecutor(agent, agents.WithMaxIterations(5)).Call(runCtx, map[string]any{"input": question})
		var ar *approval.Required
		switch {
		case errors.As(err, &ar):
			if len(decisions) == 0 {
				return fmt.Errorf("paused once more than scripted: %w", err)
			}
			fmt.Fprintf(w, "run %d paused: %s %s needs approval (call %s, attempt %d): %s\n",
				i, ar.Tool, ar.Input, ar.CallID, ar.Attempt, ar.Reason)
			for _, p := range grants.Pending() {
				fmt.Fprintf(w, "    waiting for the user: %s %s\n", p.Tool, p.Input)
			}
			d := decisions[0]
			decisions = decisions[1:]
			if d == approval.Approved {
				grants.Grant(ar.Tool, ar.Input)
				fmt.Fprintf(w, "the user approves; the run resumes\n")
			} else {
				grants.Deny(ar.Tool, ar.Input)
				fmt.Fprintf(w, "the user denies it; the run resumes\n")
			}
			// The resumed call keeps the paused call's idempotency key, and the
			// resumed run (ar.RunID) answers completed calls from the ledger.
			runCtx = run.Resume(runCtx, ar)
			continue
		case err != nil:
			return fmt.Errorf("the agent run failed: %w", err)
		}
		fmt.Fprintf(w, "\nfinal answer: %v\n", out["output"])
		break
	}
	fmt.Fprintf(w, "refund requests received upstream: %d\n", upstream.Requests(refunds.Path))
	fmt.Fprintf(w, "refunds applied by the upstream: %d\n", ledger.Applied())
	return nil
}
