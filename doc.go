// Package toolsafe makes the tools of a langchaingo agent survive a flaky
// world. Wrap a tools.Tool and it gets retries with backoff and jitter for
// transient faults only, a per-attempt timeout that holds even when the tool
// ignores its context, a total deadline, a circuit breaker and bulkhead per
// dependency, a fallback to a declared alternative, an approval gate that
// cannot be bypassed, and a short model-facing message for every failure,
// so the agent goes on instead of aborting:
//
//	invoice := toolsafe.Wrap(fetchInvoice,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.DefaultBackoff()}),
//		toolsafe.WithTimeout(2*time.Second),   // per attempt
//		toolsafe.WithDeadline(10*time.Second), // whole call, delays included
//	)
//	agent := agents.NewOneShotAgent(llm, []tools.Tool{invoice})
//
// Transient, mechanical faults (connection resets, HTTP 429 and 503, an
// attempt that timed out) are retried in code. Semantic faults
// (middleware.NewToolError) go to the model at once, verbatim. When retries
// run out the model is told what was tried. The raw text of an upstream
// error never reaches the model or a span; it is logged at DEBUG.
//
// An approval pause (approval.Required, from WithApproval) is returned as
// an error so the run stops; run.With scopes a run on a ledger and
// run.Resume continues it, so a resumed run never repeats a call that
// completed. The layers run in one order whatever the order of the options
// (see New and Layers). Package policyfile wraps a whole agent's tools from
// one reviewed YAML file; the toolsafe command checks such a file:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
package toolsafe
