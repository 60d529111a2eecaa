package mcptools

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/middleware"
)

// The reasons the model is told, in toolsafe's message ("get_forecast
// failed (its MCP session is closed) after 1 attempt. ..."). They never hold
// the server's text.
const (
	reasonClosed     = "its MCP session is closed"
	reasonTransport  = "the connection to its MCP server failed"
	reasonServer     = "its MCP server failed to handle the call"
	reasonRefused    = "its MCP server refused the request as malformed or unsupported"
	reasonURL        = "its MCP server asked the user to complete a step in a browser, which this client does not support"
	reasonNeedsInput = "its MCP server asked for input (elicitation or sampling) that this client does not give"
	detailRejected   = "its MCP server rejected the arguments; check them against the tool's parameters"
)

// JSON-RPC error codes of MCP beyond those of package jsonrpc: the SDK's
// transport refusal, and those of the 2026-07-28 protocol.
const (
	codeRejected                   = -32005 // the transport refused to send the request
	codeHeaderMismatch             = -32020 // mcp.CodeHeaderMismatch
	codeMissingClientCapabilities  = -32021 // mcp.CodeMissingRequiredClientCapabilities
	codeUnsupportedProtocolVersion = -32022 // mcp.CodeUnsupportedProtocolVersion
	codeURLElicitationRequired     = -32042 // mcp.CodeURLElicitationRequired
)

// failure maps the error of a tools/call onto toolsafe's taxonomy, by type
// and JSON-RPC code. The server's text stays in the chain (for DEBUG logs),
// never in the error's text. span, when not nil, gets the JSON-RPC code.
func (t *Tool) failure(ctx context.Context, span trace.Span, err error) error {
	if ctx.Err() != nil {
		// toolsafe knows whether it was the attempt's time, the call's
		// deadline or the caller.
		return err
	}
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return refused(reasonClosed, err)
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return middleware.Transient(middleware.NewToolError(reasonTransport).WithCause(err))
	}
	if span != nil {
		span.SetAttributes(semconv.RPCResponseStatusCodeKey.String(strconv.FormatInt(we.Code, 10)))
	}
	switch we.Code {
	case jsonrpc.CodeInvalidParams:
		if !t.listed(ctx) {
			return t.gone(err)
		}
		return &middleware.ArgsError{Problems: []string{detailRejected}, Cause: err}
	case jsonrpc.CodeMethodNotFound:
		return middleware.NewToolError("%s cannot be called: its MCP server takes no tool calls. Do not call it again; use another tool or tell the user it is unavailable.", t.name).WithCause(err)
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, codeRejected,
		codeHeaderMismatch, codeMissingClientCapabilities, codeUnsupportedProtocolVersion:
		return refused(reasonRefused, err)
	case codeURLElicitationRequired:
		return refused(reasonURL, err)
	}
	// -32603 internal error, -32001 unknown, the server's own codes, 0.
	return middleware.Transient(middleware.NewToolError(reasonServer).WithCause(err))
}

// refused is a failure another attempt would not fix, and that is not the
// model's to fix: kind tool-failed, not retried.
func refused(reason string, cause error) error {
	return middleware.Permanent(middleware.NewToolError("%s", reason).WithCause(cause))
}

// gone is the answer for a tool the server no longer lists.
func (t *Tool) gone(cause error) error {
	return middleware.NewToolError("%s is no longer offered by its MCP server. Do not call it again; use another tool or tell the user it is unavailable.", t.name).WithCause(cause)
}

// listed reports whether the server still lists the tool. It is asked only
// when the server answered invalid params, which is also its answer to an
// unknown tool. When the list cannot be had, it says yes: the server then
// rejected the arguments of a tool it listed before.
func (t *Tool) listed(ctx context.Context) bool {
	for def, err := range t.session.Tools(ctx, nil) {
		if err != nil {
			return true
		}
		if def.Name == t.def.Name {
			return true
		}
	}
	return false
}
