package otelhook

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// durationBuckets are the histogram boundaries of the call duration, in
// seconds: tool calls take from milliseconds to a minute of retries.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// executeToolBuckets are the histogram boundaries of
// gen_ai.execute_tool.duration, in seconds, as the GenAI semantic
// conventions specify them (semantic-conventions-genai v0.1.0,
// docs/gen-ai/gen-ai-metrics.md, "Metric: gen_ai.execute_tool.duration"):
// 10ms doubling to 81.92s.
var executeToolBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// instruments are the Hook's metric instruments, made from one meter
// provider.
type instruments struct {
	calls     metric.Int64Counter
	attempts  metric.Int64Counter
	duration  metric.Float64Histogram
	execute   metric.Float64Histogram // gen_ai.execute_tool.duration
	abandoned metric.Int64UpDownCounter
	breaker   metric.Int64Counter
}

func newInstruments(mp metric.MeterProvider) *instruments {
	m := mp.Meter(ScopeName, metric.WithSchemaURL(SchemaURL))
	var in instruments
	// The API returns a working no-op instrument along with any error.
	var errs [6]error
	in.calls, errs[0] = m.Int64Counter("toolsafe.tool.calls",
		metric.WithUnit("{call}"),
		metric.WithDescription("Logical tool calls, by tool and outcome (ok or the failure kind)."))
	in.attempts, errs[1] = m.Int64Counter("toolsafe.tool.attempts",
		metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts made on tools, retries included, by tool."))
	in.duration, errs[2] = m.Float64Histogram("toolsafe.tool.call.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of logical tool calls, attempts and delays included, by tool and outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.abandoned, errs[3] = m.Int64UpDownCounter("toolsafe.tool.abandoned_attempts",
		metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts given up by the attempt timeout whose tool is still running, by tool."))
	in.breaker, errs[4] = m.Int64Counter("toolsafe.circuit_breaker.state_changes",
		metric.WithUnit("{change}"),
		metric.WithDescription("Circuit breaker state changes seen during tool calls, by tool, breaker and states."))
	in.execute, errs[5] = m.Float64Histogram("gen_ai.execute_tool.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of a single tool execution."),
		metric.WithExplicitBucketBoundaries(executeToolBuckets...))
	if err := errors.Join(errs[:]...); err != nil {
		otel.Handle(err)
	}
	return &in
}
