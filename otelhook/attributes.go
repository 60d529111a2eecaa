package otelhook

import "go.opentelemetry.io/otel/attribute"

// ScopeName is the instrumentation scope of the Hook's tracer and meter: the
// import path of this package.
const ScopeName = "github.com/toolsafe/toolsafe/otelhook"

// SchemaURL is the schema URL of the Hook's tracer and meter: the
// OpenTelemetry GenAI semantic conventions, now in their own repository
// (open-telemetry/semantic-conventions-genai), development version
// 1.42.0-dev, the version toolsafe follows.
const SchemaURL = "https://opentelemetry.io/schemas/gen-ai-dev/1.42.0-dev"

// ReplayOperation is the gen_ai.operation.name of a call answered from the
// run ledger or by the identical call in flight when it was made, whose
// span is named "replay_tool {gen_ai.tool.name}": no tool ran, and the GenAI conventions forbid reporting a replay as a new
// execution, so it is no "execute_tool".
const ReplayOperation = "toolsafe.replay"

// outcomeReplayed is the outcome (metrics) of a call answered from the run
// ledger.
const outcomeReplayed = "replayed"

// Attribute keys toolsafe adds to those of the GenAI semantic conventions. None of them ever holds a foreign error's text or, unless opted
// in, the tool's arguments or output.
const (
	// CallIDKey (string, call span) is toolsafe's own ID of the call
	// (middleware.CallID), on every call span: the model's tool-call ID when
	// known (then gen_ai.tool.call.id too), else one toolsafe made up, the
	// same as the call_id of the call's log lines, so a log line can be
	// found in the trace.
	CallIDKey = attribute.Key("toolsafe.call.id")
	// AttemptsKey (int, call span) is the number of attempts made on the
	// tool: 1 means no retry, 0 that none was made (invalid input, open
	// circuit, approval pause).
	AttemptsKey = attribute.Key("toolsafe.attempts")
	// AbandonedKey (int, call span) is the number of attempts the attempt
	// timeout gave up on while the tool was still running.
	AbandonedKey = attribute.Key("toolsafe.abandoned")
	// SummaryKey (string, call span) is the outcome in words: on failure the
	// message the model got, on success toolsafe's own line such as
	// "ok after 4 attempts" (never the tool's output).
	SummaryKey = attribute.Key("toolsafe.summary")
	// FallbackKey (string, call span and "fallback" event) is the name of the
	// alternative tool the call was routed to.
	FallbackKey = attribute.Key("toolsafe.fallback")
	// ReplayedKey (bool, call span) is true when the call was answered from
	// the run ledger (a resumed run; see run.With), or by the identical
	// call of the run in flight when it was made, without calling the tool;
	// absent otherwise.
	ReplayedKey = attribute.Key("toolsafe.replayed")
	// SideEffectKey (string, call span) is "unknown" when a failed call's
	// action may have been applied; absent otherwise.
	SideEffectKey = attribute.Key("toolsafe.side_effect")
	// AttemptKey (int, attempt span and "retry" event) is the attempt's
	// number, 1-based; on a "retry" event, the attempt that failed.
	AttemptKey = attribute.Key("toolsafe.attempt")
	// AttemptAbandonedKey (bool, attempt span) is true when the attempt
	// timeout gave up on the attempt while the tool was still running.
	AttemptAbandonedKey = attribute.Key("toolsafe.attempt.abandoned")
	// RetryableKey (bool, failed attempt span and failed call span) says
	// whether another attempt may succeed. On the call span it is false
	// after toolsafe's own retries ran out.
	RetryableKey = attribute.Key("toolsafe.retryable")
	// ReasonKey (string, failed attempt span) is a short reason derived from
	// the error's type (middleware.Reason): "the connection was reset",
	// "HTTP 503 Service Unavailable", or a ToolError's own message. Absent
	// when the type says nothing more than error.type.
	ReasonKey = attribute.Key("toolsafe.reason")
	// DelayKey (float64, seconds, "retry" event) is the delay before the next
	// attempt: 0.5 for 500ms.
	DelayKey = attribute.Key("toolsafe.delay_s")
	// CancelCauseKey (string, "canceled" event) is "canceled" when the
	// caller canceled its context and "deadline_exceeded" when the caller's
	// own deadline passed.
	CancelCauseKey = attribute.Key("toolsafe.cancel_cause")
	// BreakerKey (string, "circuit_breaker.state_change" event and metric)
	// names the breaker: the dependency it guards ("billing"), or "".
	BreakerKey = attribute.Key("toolsafe.circuit_breaker.name")
	// BreakerFromKey (string, "circuit_breaker.state_change" event and
	// metric) is the state the breaker left: "closed", "open" or "half-open".
	BreakerFromKey = attribute.Key("toolsafe.circuit_breaker.from")
	// BreakerToKey (string, "circuit_breaker.state_change" event and metric)
	// is the state the breaker entered: "closed", "open" or "half-open".
	BreakerToKey = attribute.Key("toolsafe.circuit_breaker.to")
	// BreakerStateKey (string, gauge toolsafe.circuit_breaker.state) is the
	// state a series stands for: "closed", "half-open" or "open".
	BreakerStateKey = attribute.Key("toolsafe.circuit_breaker.state")
	// ScopeKey (string, gauges) is ScopeFleet for state a fleet of replicas
	// shares (through redisstore), ScopeLocal for state this process keeps.
	ScopeKey = attribute.Key("toolsafe.scope")
	// BulkheadKey (string, bulkhead gauges) names the bulkhead: the
	// dependency it guards.
	BulkheadKey = attribute.Key("toolsafe.bulkhead.name")
	// BudgetKey (string, retry budget gauge) names the retry budget: the
	// dependency it belongs to.
	BudgetKey = attribute.Key("toolsafe.retry_budget.name")
	// KindKey (string, failed attempt span) is the failure's Kind, also
	// where error.type is what the error names itself (an MCP tool's
	// "tool_error" or a JSON-RPC code, package mcptools).
	KindKey = attribute.Key("toolsafe.kind")
	// TruncatedKey (string slice, call span) names the content attributes
	// (gen_ai.tool.call.arguments, .result) cut at the content limit.
	TruncatedKey = attribute.Key("toolsafe.truncated")
	// OutcomeKey (string, metrics) is "ok", "replayed" or the failure's
	// Kind ("tool-failed", "approval-required", "canceled", …).
	OutcomeKey = attribute.Key("toolsafe.outcome")
)

// Names of the span events on the call span.
const (
	// eventRetry is added when a retry is scheduled.
	eventRetry = "retry"
	// eventFallback is added when the call is routed to its alternative tool.
	eventFallback = "fallback"
	// eventBreakerStateChange is added when a circuit breaker changes state
	// during the call.
	eventBreakerStateChange = "circuit_breaker.state_change"
	// eventApprovalRequired is added when the call pauses for approval.
	eventApprovalRequired = "approval_required"
	// eventCanceled is added when the caller's context ended the call.
	eventCanceled = "canceled"
	// eventReplayed is added when the call is answered from the run ledger,
	// or shares the outcome of the identical call in flight when it was
	// made (whose call ID it carries, as gen_ai.tool.call.id).
	eventReplayed = "replayed"
)
