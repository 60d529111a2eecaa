package mcptools

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
)

// Option configures List and New.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	rename     func(string) string
	filter     func(*mcp.Tool) bool
	noSpans    bool
	propagator propagation.TextMapPropagator
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithRename names each tool rename(its MCP name) for the agent and the
// model, for example to prefix the tools of one server or to replace the
// "." that MCP allows in a name and OpenAI's function names do not. Calls
// still go to the MCP name. A name that rename makes empty is an error. Nil,
// like no WithRename, keeps the MCP names.
func WithRename(rename func(mcpName string) string) Option {
	return optionFunc(func(c *config) { c.rename = rename })
}

// WithFilter makes List keep only the tools for which keep returns true; the
// others are neither built nor checked. keep must not modify the tool. Nil,
// like no WithFilter, keeps every tool.
func WithFilter(keep func(*mcp.Tool) bool) Option {
	return optionFunc(func(c *config) { c.filter = keep })
}

// WithSpanAttributes turns the MCP span attributes that Call adds to the
// span in its ctx on (the default) or off. Turn them off for a tool used
// without toolsafe.WithTracing, whose ctx carries its caller's span rather
// than an attempt's.
func WithSpanAttributes(on bool) Option {
	return optionFunc(func(c *config) { c.noSpans = !on })
}

// WithPropagator sets the propagator that writes the trace context of each
// tools/call into its params._meta ("traceparent", "tracestate" and
// "baggage", unprefixed, as the MCP semantic conventions and SEP-414 say),
// so that a traced server joins the agent's trace. Nil, the default, means
// the global propagator (otel.GetTextMapPropagator), looked up at each call;
// set one there, such as propagation.TraceContext{}, or nothing is sent.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.propagator = p })
}
