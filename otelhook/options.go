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
	limit    int  // bytes of content recorded; 0: DefaultContentLimit
	hostSpan bool // WithHostCallSpan: join the host's call span
}

// contentLimit is the most bytes of arguments or result recorded.
func (c *config) contentLimit() int {
	if c.limit <= 0 {
		return DefaultContentLimit
	}
	return c.limit
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
// span as gen_ai.tool.call.arguments: a structured value when it is JSON,
// else its text, cut at the content limit (WithContentLimit). Off by
// default unless ContentEnv turns it on: arguments may hold personal data.
func WithRecordArguments(on bool) Option {
	return optionFunc(func(c *config) { c.args = on })
}

// WithRecordResults, when on is true, records the answer of a successful
// call on the call span as gen_ai.tool.call.result, as WithRecordArguments
// records the input. Off by default unless ContentEnv turns it on. A
// failure's model-facing message is recorded either way (toolsafe.summary),
// with what quotes the input or an upstream's words withheld.
func WithRecordResults(on bool) Option {
	return optionFunc(func(c *config) { c.results = on })
}

// WithContentLimit sets the most bytes of a tool's arguments or result
// recorded on a span: longer content is recorded as its first n bytes (cut
// on a character boundary) as a string, and [TruncatedKey] names it. n of
// zero or less means DefaultContentLimit (16 KiB).
func WithContentLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit = n })
}
