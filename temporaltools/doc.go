// Package temporaltools runs toolsafe tools as Temporal activities, so that
// an agent run in a workflow survives a crash, a deploy or a week-long wait
// for a person. Temporal owns durability and retries; toolsafe keeps what
// Temporal lacks: which failures are worth retrying and which belong to
// the model, words the model can act on, an attempt timeout that holds
// when the tool ignores its context, breakers and bulkheads per
// dependency, argument validation, an approval gate bound to the exact
// input, and a span per attempt.
//
// On the worker, wrap each tool with New and register it:
//
//	refund, err := temporaltools.New(refundTool,
//		toolsafe.WithTimeout(2*time.Second),
//		toolsafe.WithCircuitBreaker(billing),
//		toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
//		toolsafe.WithApproval(temporaltools.Decisions(nil)),
//	)
//	err = temporaltools.Register(w, fetchInvoice, refund)
//
// In the workflow, call the tools through a Run:
//
//	r, err := temporaltools.NewRun(ctx, temporaltools.RunOptions{})
//	res, err := r.Call(ctx, call.Tool, call.Input, call.ID)
//	messages = append(messages, toolMessage(call.ID, res.Observation))
//
// # How a failure crosses
//
// The call's kind decides what Temporal sees. A transient failure
// (tool-failed of a transient cause, tool-timeout, circuit-open, tool-busy,
// budget-exceeded) is a retryable ApplicationError of the kind's type, with
// NextRetryDelay from Retry-After or the time an open breaker has left; a
// failure meant for the model (tool-error, args-invalid, approval-denied,
// call-limit) is the activity's result, so the workflow hands the model
// toolsafe's message; a failure that must not be sent again (a panic, a
// Permanent error, an attempt of a tool without idempotency keys that may
// have been applied) is a non-retryable ApplicationError. Their messages
// are toolsafe's, and no foreign error's text or cause crosses into the
// history. When Temporal gives up (the retry policy's attempts or
// ScheduleToCloseTimeout spent, a worker that never answered), Run.Call
// gives the model a message saying what was tried: the attempts, the time,
// and not to call the tool again with the same input.
//
// toolsafe makes one attempt per activity attempt unless RetryInActivity
// asks for both. The idempotency key is Key of the workflow execution and
// the activity, the same for every attempt, so an upstream that honours
// Idempotency-Key applies a retried call once.
//
// # Approvals
//
// A call that needs approval (toolsafe.WithApproval with Decisions) pauses;
// the workflow waits for a person's decision, durably, for days if need
// be. The decision arrives with the update DecideUpdate, bound to the
// request as it was shown (tool, canonical input, run, call), and the call
// continues under the paused call's key. Store is the approvals inbox's
// store over Temporal: package inbox lists what the workflows wait for and
// sends the decisions through it, beside the requests of any other store
// (StoreOptions.Others), and the workflow keeps the audit trail.
//
// # Replay
//
// The loop guard's counts (toolsafe.WithCallLimits) live in the workflow's
// state, rebuilt from its history on replay, so every worker decides the
// same. Nothing of toolsafe's runs in the workflow but counting and
// waiting: no span is emitted there, and none again on replay. With
// Temporal's tracing interceptor, the attempt spans (and the call span,
// unless otelhook.WithHostCallSpan adds to the activity's span instead)
// are under the activity's span.
package temporaltools
