// Package toolsafe makes the tools of a langchaingo agent survive a flaky
// world. Wrap a tools.Tool and it gets retries with backoff and jitter for
// transient faults only, a per-attempt timeout that holds even when the tool
// ignores its context, a total deadline, and a short model-facing message for
// every failure, so the agent goes on instead of aborting:
//
//	invoice := toolsafe.Wrap(fetchInvoice,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.DefaultBackoff()}),
//		toolsafe.WithTimeout(2*time.Second),   // per attempt
//		toolsafe.WithDeadline(10*time.Second), // whole call, waits included
//	)
//	agent := agents.NewOneShotAgent(llm, []tools.Tool{invoice})
//
// # Who acts on a failure
//
// Transient, mechanical faults (connection resets, HTTP 429 and 503, an
// attempt that timed out) are retried in code. Semantic faults
// (middleware.NewToolError: bad arguments, not found) go to the model at
// once, verbatim. When retries run out the model is told what was tried, so
// it does not retry by hand. The raw text of an upstream error never reaches
// the model; it is logged at DEBUG.
//
// # The order of layers
//
// Wrap builds the layers of DESIGN.md §2, outermost first: surface, the
// middlewares given to With, total deadline, retry, attempt timeout, panic
// recovery, the tool.
package toolsafe
