// Package mcptools makes the tools of an MCP server langchaingo tools,
// ready for toolsafe.Wrap, the policies file or any agent.
//
// It is a module of its own (github.com/toolsafe/toolsafe/mcptools), so
// that programs using toolsafe without MCP do not get the MCP SDK in their
// module graph. It uses the official SDK, github.com/modelcontextprotocol/go-sdk.
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "my-agent", Version: "v1"}, nil)
//	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("weather-server")}, nil)
//	if err != nil { ... }
//	defer session.Close()
//	mcpTools, err := mcptools.List(ctx, session)
//	if err != nil { ... }
//	var wrapped []tools.Tool
//	for _, t := range mcpTools {
//		wrapped = append(wrapped, toolsafe.Wrap(t, // its inputSchema is checked before any attempt
//			toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.DefaultBackoff()}),
//			toolsafe.WithTimeout(10*time.Second),
//			toolsafe.WithTracing(otelhook.New()),
//		))
//	}
//	agent := agents.NewOneShotAgent(llm, wrapped)
//
// Each tool's Call sends tools/call with its input, a JSON object, as the
// arguments, and answers with the result's content. Its name is the MCP
// tool's name (see WithRename), its description the MCP description (or
// title), and its JSON Schema the MCP input schema: Tool.ArgsSchema gives it
// to a function-calling model (package toolsafe/toolcall), and every input is
// checked against it before anything is sent.
//
// # Failures
//
// What the server answers is mapped by type and JSON-RPC code, never by the
// text of an error, onto toolsafe's failure kinds. The server's protocol
// error text never reaches the model: it stays in the error's chain, for
// toolsafe's DEBUG log.
//
//   - A result with isError: tool-error, not retried. The model sees the
//     result's content: the server's message, meant for it.
//   - Input that breaks the input schema: args-invalid, not retried, and
//     nothing is sent. The model is told which argument is wrong and how.
//   - JSON-RPC invalid params (-32602) for a tool the server still lists:
//     args-invalid, not retried; the model is told the server rejected the
//     arguments.
//   - Invalid params for a tool the server no longer lists, and method not
//     found (-32601): tool-error, not retried; the model is told the server
//     no longer offers the tool, or takes no tool calls.
//   - A closed session (mcp.ErrConnectionClosed, mcp.ErrSessionMissing):
//     tool-failed, not retried (middleware.Permanent); the model is told its
//     MCP session is closed.
//   - A request the server refuses as malformed or unsupported (-32700,
//     -32600, -32005, -32020, -32021, -32022), a URL elicitation (-32042),
//     and a request for input (elicitation, sampling) that the session does
//     not fulfil: tool-failed, not retried; the model is told what the server
//     refused or asked for.
//   - Any other JSON-RPC error (-32603 internal error, a handler's plain
//     error, the server's own codes): transient, retried, then tool-failed;
//     the model is told the server failed to handle the call.
//   - A transport failure (the pipe broke, the server's process died
//     mid-call): transient, retried. The retry finds the session closed and
//     reports that, so a dead server costs one more attempt and is never
//     spun on. Reconnecting is the program's to do: a new session, and List
//     again.
//   - The end of ctx: ctx's error, which toolsafe reports as tool-timeout
//     (its attempt timeout or deadline) or canceled (the caller's).
//
// Invalid params is both the server's answer to bad arguments and, in the
// MCP specification and the Go SDK, to an unknown tool name. Call tells the
// two apart by listing the server's tools again: one tools/list, made only
// on that answer (a server that lets clients cache its list, SEP-2549, may
// be answered from the cache).
//
// # Content
//
// Text content reaches the model as it is, one block per line. Other
// content is summarised, never dropped silently: "[image: image/png,
// 12 KB]", "[audio: audio/wav, 3 KB]", "[resource link: file:///r.pdf
// (r.pdf, application/pdf)]", an embedded text resource as "[resource:
// uri]" and its text, a binary one as "[resource: uri, application/pdf,
// 40 KB]". A result with no content but structured content answers with
// that, as JSON.
//
// # Spans
//
// With toolsafe.WithTracing, each attempt's span ("attempt {n}", in the ctx
// Call is given) gets the MCP attributes of the OpenTelemetry semantic
// conventions v1.41.0: mcp.method.name "tools/call", mcp.protocol.version,
// mcp.session.id when the transport has a session ID (streamable HTTP), and
// rpc.response.status_code, the JSON-RPC error code, when the server
// answered with an error. The call span keeps the GenAI attributes toolsafe
// gives it. Call annotates whatever span its ctx carries: a tool used
// without toolsafe's tracing would annotate its caller's span, so turn it
// off with WithSpanAttributes(false) there. The server's error text is
// never put in a span.
package mcptools
