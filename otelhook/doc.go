// Package otelhook traces and measures toolsafe tool calls with
// OpenTelemetry: a span "execute_tool {gen_ai.tool.name}" (kind INTERNAL)
// for every logical call, a child span "attempt {n}" for every attempt,
// span events for retries, fallbacks and circuit breaker changes, and
// metrics for calls, attempts, durations and abandoned attempts. Give a
// Hook to toolsafe.WithTracing; one Hook serves every tool.
//
// # Conventions
//
// The spans follow the OpenTelemetry GenAI semantic conventions, now kept in
// their own repository, at development version 1.42.0-dev ([SchemaURL]):
// https://github.com/open-telemetry/semantic-conventions-genai, "Semantic
// conventions for generative AI tool execution" (docs/gen-ai/execute-tool.md)
// and "GenAI execution state changes" (docs/gen-ai/gen-ai-execution.md).
// Attribute keys come from go.opentelemetry.io/otel/semconv/v1.41.0.
//
//   - A failure sets error.type to its Kind and status Error; an approval
//     pause and the caller's own cancellation or deadline do not (Example_pause).
//   - The tool's arguments and result (gen_ai.tool.call.arguments, .result)
//     are opt-in: with WithRecordArguments, WithRecordResults or [ContentEnv],
//     recorded as structured values, cut at WithContentLimit bytes
//     (ExampleWithRecordArguments).
//   - A call answered from the run ledger ran no tool: as the conventions
//     require of a replay, it is not reported as an execution; its span is
//     "replay_tool {gen_ai.tool.name}" with [ReplayOperation] (Example_replay).
//   - An attempt that a limit cut names the limit in [ReasonKey]: the attempt
//     timeout, the call's deadline or the caller's (ExampleNew_attemptTimeout).
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
// The text of a foreign error, an HTTP body, an upstream's own message (an
// MCP server's isError text, middleware.UpstreamToolError) and, unless
// opted in, the tool's arguments and output never reach a span, event or
// metric label: only Kinds, sizes and toolsafe's own words.
//
// # Metrics
//
// Under the meter [ScopeName]:
//
//   - gen_ai.execute_tool.duration (s), as the GenAI semantic conventions
//     define it (semantic-conventions-genai v0.1.0,
//     docs/gen-ai/gen-ai-metrics.md, "Metric: gen_ai.execute_tool.duration"):
//     a histogram with their bucket boundaries (0.01s doubling to 81.92s),
//     gen_ai.tool.name, gen_ai.tool.type and, when the call failed,
//     error.type (its Kind; not for an approval pause or the caller's
//     cancellation, as on the span). Its value is the call span's duration,
//     from the same two timestamps; a replay is no execution and is not
//     recorded. With WithHostCallSpan the host's span has its own times;
//   - toolsafe's own counters: toolsafe.tool.calls (by tool and outcome),
//     toolsafe.tool.attempts, toolsafe.tool.call.duration (s),
//     toolsafe.tool.abandoned_attempts and
//     toolsafe.circuit_breaker.state_changes (ExampleWithMeterProvider);
//   - gauges of what is open, busy and waiting, for the breakers,
//     bulkheads, grants, fleet stores and retry budgets given to
//     [Hook.Observe] (ExampleHook_Observe).
//
// Every label is bounded: tool and dependency names the program chose,
// Kinds and fixed words.
package otelhook
