package otelhook

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// config holds what the options set; the zero config means the global
// providers and no arguments or results recorded.
type config struct {
	tp       trace.TracerProvider // nil: otel.GetTracerProvider() at each call
	mp       metric.MeterProvider // nil: otel.GetMeterProvider() at each call
	args     bool
	results  bool
	hostSpan bool // WithHostCallSpan: join the host's call span
}

// Option configures a Hook. Options are applied in order; a later option of
// the same kind replaces an earlier one.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the provider of the Hook's tracer. Nil, the
// default, means the global provider (otel.GetTracerProvider), looked up at
// each call, so a provider set with otel.SetTracerProvider after New is
// used.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider sets the provider of the Hook's meter. Nil, the default,
// means the global provider (otel.GetMeterProvider), looked up at each call.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithRecordArguments, when on is true, records the tool's input on the call
// span as gen_ai.tool.call.arguments (semconv v1.41.0). Off by default:
// arguments may hold personal data.
func WithRecordArguments(on bool) Option {
	return optionFunc(func(c *config) { c.args = on })
}

// WithRecordResults, when on is true, records the output of a successful
// call on the call span as gen_ai.tool.call.result (semconv v1.41.0). Off by
// default: results may hold personal data. A failure's model-facing message
// is recorded either way (as toolsafe.summary); it never holds the tool's
// output or a foreign error's text.
func WithRecordResults(on bool) Option {
	return optionFunc(func(c *config) { c.results = on })
}
