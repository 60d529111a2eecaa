package mcptools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"

	"github.com/toolsafe/toolsafe/approval"
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
	trusted    bool
	server     string
	reconnect  func(context.Context) (*mcp.ClientSession, error)
	meters     metric.MeterProvider
	// inputApprover is asked the server's input requests (WithInputApprover).
	inputApprover approval.Approver
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

// WithTrusted says whether the program trusts the server's tool
// annotations. The MCP specification says a client must take them as
// untrusted unless they come from a trusted server, so by default they only
// tighten: every tool has side effects without a key (it is sent again
// only after a failure that proves nothing was applied), and a tool whose
// destructiveHint is true or absent is reported as a candidate for approval
// (see middleware.Hints). For a trusted server they loosen too: a
// read-only tool is retried freely, an idempotent one after an outcome
// that is unknown. An explicit toolsafe.WithSideEffects (or a policies
// file's side_effects) always wins over a hint. The default is false.
func WithTrusted(trusted bool) Option {
	return optionFunc(func(c *config) { c.trusted = trusted })
}

// WithServerName names the server for the program's policies file: a file
// whose mcp_servers has an entry of that name with trusted: true trusts its
// annotations as WithTrusted(true) does (see package policyfile). It is the
// program's name for the server, never the one the server gives itself,
// which is the server's to choose. "" (the default) gives none.
func WithServerName(name string) Option {
	return optionFunc(func(c *config) { c.server = name })
}

// WithReconnect gives the tools a way to start a new session when theirs is
// gone: the server answered 404 for it (it restarted, or forgot it: the
// specification says the client MUST start a new session), or its
// connection is closed. A call that the old session never delivered is then
// sent again at once on the new one, even for a tool with side effects; a
// call whose answer was lost is not (its outcome is unknown), and the next
// call goes to the new session. connect must return a new, connected
// session each time, such as
//
//	func(ctx context.Context) (*mcp.ClientSession, error) {
//		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
//	}
//
// (a CommandTransport runs its command once: make a new exec.Cmd each
// time). The tools of one List share their sessions, and connect is called
// by one call at a time; the session it replaced is closed. Nil, the
// default, never reconnects: a gone session is told to the model as closed.
func WithReconnect(connect func(ctx context.Context) (*mcp.ClientSession, error)) Option {
	return optionFunc(func(c *config) { c.reconnect = connect })
}

// WithMeterProvider sets the meter provider of the MCP semantic
// conventions' mcp.client.operation.duration histogram (seconds), which
// each tools/call records with mcp.method.name, gen_ai.tool.name,
// mcp.protocol.version and, on failure, error.type and
// rpc.response.status_code. Nil, the default, means the global one
// (otel.GetMeterProvider), looked up at a tool's first call.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meters = mp })
}
