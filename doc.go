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
// # One dependency, many tools
//
// A circuit breaker, a bulkhead and a retry budget belong to the service a
// tool calls; every tool of that service shares them:
//
//	billing := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 5, Delay: 30 * time.Second})
//	billingSlots := policy.NewBulkhead("billing", 8, time.Second)
//	billingRetries := budget.NewBuilder().WithMaxRate(0.2).Build()
//	invoice := toolsafe.Wrap(fetchInvoice, toolsafe.WithRetry(retry),
//		toolsafe.WithCircuitBreaker(billing), toolsafe.WithBulkhead(billingSlots),
//		toolsafe.WithRetryBudget(billingRetries))
//
// An open breaker fails the call at once with circuit-open, a full bulkhead
// with tool-busy, a spent budget with budget-exceeded; none is retried.
//
// # Approvals and side effects
//
// WithApproval puts a gate in front of the tool: an Approver (such as
// approval.NewGrants) answers Approved, Denied or Pending, and Pending
// pauses the agent run with *approval.Required. WithDestructive
// makes every attempt, retries included, ask again. WithSideEffects says
// whether the tool sends the call's idempotency key; one that does not is
// not retried after an attempt that may have landed, and the model is told
// to check before calling again. To resume a paused run, pass
// run.Resume(ctx, ar) to it: the resumed call keeps its idempotency
// key, so an action re-sent after a lost answer is applied once.
//
// # Fallbacks
//
// WithFallback(fallback.To(alt)) routes a call that failed for good to an
// alternative tool, itself a wrapped tool with its own retries and gate; a
// plain tools.Tool runs once with this tool's attempt timeout and deadline,
// its panics recovered.
//
// # Policies from one file
//
// A team with many tools keeps their policies in one reviewed YAML file
// and wraps the agent's tools by name with package policyfile, whose
// WrapAll returns Tools, a tool list checked for names that collide. The
// toolsafe command checks such a file in CI:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
//
// # The order of layers
//
// Wrap builds the layers in one order, outermost first, whatever the order
// of the options: the call span, surface (which builds the call's failure
// and the model's message), argument validation, the middlewares given to
// With, fallback, total deadline, retry, the side-effect guard, the
// approval gate (asked before any permit is taken), the failsafe-go
// policies given to WithPolicies, circuit breaker, bulkhead, attempt
// timeout, the attempt span, panic recovery, the tool.
package toolsafe
