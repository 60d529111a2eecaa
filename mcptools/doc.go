// Package mcptools makes the tools of an MCP server langchaingo tools,
// ready for toolsafe.Wrap, the policies file or any agent. It uses the
// official SDK (github.com/modelcontextprotocol/go-sdk) and is a module of
// its own, so that programs without MCP do not get the SDK.
//
//	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("weather-server")}, nil)
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
// # Failures
//
// What the server answers is mapped onto toolsafe's failure kinds by type
// and JSON-RPC code, never by text, and its error text never reaches the
// model (it stays in the error's chain, for logs): a result with isError is
// a tool-error, whose content the model sees; input the schema or the
// server rejects is args-invalid; a closed session and a request the server
// refuses as malformed are tool-failed, not retried; any other JSON-RPC
// error and a broken transport are transient, retried; the end of ctx is
// ctx's error. The README's "MCP tools" section has every case.
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
// tracing. Each tools/call carries the trace context in params._meta
// (traceparent, tracestate; see WithPropagator), so a traced server joins
// the agent's trace. An isError result's text reaches the model, but a span
// gets only its size; the server's error text is never put in a span.
//
// TypeScript-SDK servers answer an unknown tool and input their schema
// rejects with isError results ("MCP error -32602: ...") rather than
// JSON-RPC errors; those are mapped as -32602 is.
package mcptools
