// Package otelhook traces and measures toolsafe tool calls with
// OpenTelemetry: a span for every logical call and a child span for every
// attempt, span events for retries, fallbacks and circuit breaker changes,
// and metrics for calls, attempts, durations and abandoned attempts.
//
// Give a Hook to toolsafe.WithTracing; it places the two layers: the call
// span outermost, the attempt span inside the attempt timeout:
//
//	hook := otelhook.New() // the global providers, resolved at each call
//	invoice := toolsafe.Wrap(fetchInvoice,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.DefaultBackoff()}),
//		toolsafe.WithTracing(hook),
//	)
//
// # Spans
//
// The call span is named "execute_tool {gen_ai.tool.name}", kind INTERNAL,
// and follows the GenAI semantic conventions v1.41.0
// (go.opentelemetry.io/otel/semconv/v1.41.0): gen_ai.operation.name
// "execute_tool", gen_ai.tool.name, gen_ai.tool.description, gen_ai.tool.type
// "function", and gen_ai.tool.call.id when the model's tool-call ID is known
// (see toolsafe.CallIDs). toolsafe adds [AttemptsKey], [AbandonedKey],
// [SummaryKey] and, when a fallback answered, [FallbackKey].
//
// The outcome of the call sets its status:
//
//   - success: status Unset, and a summary written by toolsafe ("ok after 4
//     attempts"), never the tool's output;
//   - a failure: status Error with the model-facing message as description,
//     error.type the failure's Kind ("tool-failed", "tool-timeout", …), and
//     that message as summary;
//   - an approval pause: status Unset and an "approval_required" event: a
//     pause is not an error;
//   - the caller's cancellation: status Unset and a "canceled" event. The
//     caller chose to stop, or its own deadline passed; that says nothing
//     about the tool, so it neither turns the trace red nor sets error.type.
//     The calls metric still counts it, with outcome "canceled".
//
// Every call span carries [CallIDKey], toolsafe's ID of the call, the
// call_id of its log lines.
//
// Each attempt gets a child span "attempt {n}" with [AttemptKey] and, when
// it failed, error.type, [RetryableKey], [ReasonKey] and status Error; an
// attempt that the caller's cancellation ended has error.type canceled and
// status Unset, and one cut by the call's deadline is a tool-timeout. An
// attempt given up by the attempt timeout ends its span when the caller
// gets control back, with [AttemptAbandonedKey] true; the tool may go on running in
// the background (see the abandoned-attempts metric).
//
// Events on the call span: "retry" ([AttemptKey], [DelayKey] in seconds,
// error.type), "fallback" ([FallbackKey]), "circuit_breaker.state_change"
// ([BreakerKey], [BreakerFromKey], [BreakerToKey]). An alternative tool
// reached by a fallback, wrapped with tracing too, gets its own call span
// under the primary's.
//
// # A host's call span
//
// Some agent frameworks start the call span themselves (ADK for Go's
// "execute_tool {tool}"). With WithHostCallSpan the Hook adds the call
// span's attributes, events and status to the recording span it finds in
// the call's context, starts only the attempt spans, under it, and leaves
// ending it to the host: a call never has two call spans.
//
// # What is never recorded
//
// The text of a foreign error (a *net.OpError, an HTTP body) never reaches
// a span attribute, event, status or metric label: only the Kind, toolsafe's
// own model-facing message and middleware.Reason, which is derived from the
// error's type. A middleware.ToolError's message is model-facing text and is
// recorded as the model sees it, so it should not carry what must stay out
// of traces. The tool's arguments and output may hold personal data: they
// are recorded (gen_ai.tool.call.arguments, gen_ai.tool.call.result) only
// with WithRecordArguments and WithRecordResults.
//
// # Metrics
//
// Through the OpenTelemetry metric API, under the meter named [ScopeName]:
//
//	toolsafe.tool.calls               counter, {call}: tool, outcome ("ok" or the Kind)
//	toolsafe.tool.attempts            counter, {attempt}: tool
//	toolsafe.tool.call.duration       histogram, s: tool, outcome
//	toolsafe.tool.abandoned_attempts  up-down counter, {attempt}: tool
//	toolsafe.circuit_breaker.state_changes  counter, {change}: tool, breaker, from, to
//
// Attributes are gen_ai.tool.name ("tool"), toolsafe.outcome,
// toolsafe.circuit_breaker.name, .from and .to: names and Kinds, never error
// text. The abandoned-attempts counter goes up when the attempt timeout
// gives up on a tool still running and down when that tool returns, so it is
// the number of abandoned attempts still in flight.
package otelhook
