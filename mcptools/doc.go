// Package mcptools makes the tools of an MCP server langchaingo tools,
// ready for toolsafe.Wrap, the policies file or any agent. It uses the
// official SDK (github.com/modelcontextprotocol/go-sdk) and is a module of
// its own, so that programs without MCP do not get the SDK.
//
//	transport := mcptools.Transport(&mcp.CommandTransport{Command: exec.Command("weather-server")})
//	session, err := client.Connect(ctx, transport, nil)
//	mcpTools, err := mcptools.List(ctx, session)
//	for _, t := range mcpTools {
//		wrapped = append(wrapped, toolsafe.Wrap(t, toolsafe.WithTimeout(10*time.Second)))
//	}
//
// Each tool's Call sends tools/call with its input, a JSON object, as the
// arguments, and answers with the result's content. Its name is the MCP
// tool's (see WithRename), its description the MCP description (or title),
// and its JSON Schema the MCP input schema, checked before anything is sent
// and given by Tool.ArgsSchema to a function-calling model (package
// toolcall).
//
// # Side effects
//
// Each tool declares middleware.Hints from its annotations (Tool.Hints),
// and toolsafe.New takes its side effects from them unless an option says
// otherwise. The MCP specification says a client must take annotations as
// untrusted unless they come from a trusted server, so by default they only
// tighten: every tool has side effects without a key, and one whose
// destructiveHint is true or absent is a candidate for approval. For a
// server the program trusts (WithTrusted, or a policies file's
// mcp_servers entry for the name given with WithServerName) a read-only
// tool is retried freely and an idempotent one after an outcome that is
// unknown.
//
// # Failures
//
// What the server answers is mapped onto toolsafe's failure kinds by type,
// JSON-RPC code and what the HTTP client saw (connect through Transport),
// never by text, and its error text never reaches the model (it stays in
// the error's chain, for logs). A failure proves that nothing was applied
// only where the protocol says so (a JSON-RPC error returned before the
// tool ran, a request that never reached the server, a 429 or 503, a
// session the server forgot): those are marked middleware.NotApplied or
// prove it by their type. Everything else from a tool with side effects
// (an internal error, a connection broken after the request went out, a
// response stream cut, a 502) is an outcome that is unknown: it is not sent
// again without a key, and the model is told it may have been applied. A
// result with isError is a tool-error, whose content the model sees; input
// the schema or the server rejects is args-invalid; an input request is a
// pause for a person (WithInputApprover) when a decision answers it, else
// a tool-error saying the tool needs a person; a 429 or 503 honours its
// Retry-After. With WithReconnect a session the server no longer knows is
// started again and the call sent on it. The README's "MCP tools" section
// has every case, and what go-sdk cannot do yet (tasks).
//
// # Content and spans
//
// Text reaches the model as it is, one block per line; images, audio and
// resources are summarised ("[image: image/png, 12 KB]"), never dropped.
// With toolsafe.WithTracing each attempt's span gets the MCP attributes of
// the OpenTelemetry MCP semantic conventions (semantic-conventions-genai,
// docs/gen-ai/mcp.md; keys from semconv v1.41.0): mcp.method.name,
// mcp.protocol.version, mcp.session.id, rpc.response.status_code,
// jsonrpc.request.id (connect through Transport) and error.type
// "tool_error" for an isError result or the JSON-RPC code; turn them off
// with WithSpanAttributes(false) where a tool is used without toolsafe's
// tracing. mcp.session.id is set only for a session that has one (a
// stateless server's has none), and each tools/call records the
// conventions' mcp.client.operation.duration (WithMeterProvider). Each
// tools/call carries the trace context in params._meta
// (traceparent, tracestate; see WithPropagator), so a traced server joins
// the agent's trace, and the call's idempotency key (IdempotencyKeyMeta),
// so a server can apply the attempts of one call once. An isError result's text reaches the model, but a span
// gets only its size; the server's error text is never put in a span.
//
// TypeScript-SDK servers answer an unknown tool and input their schema
// rejects with isError results ("MCP error -32602: ...") rather than
// JSON-RPC errors; those are mapped as -32602 is.
package mcptools
