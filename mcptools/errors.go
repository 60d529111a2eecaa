package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

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
	reasonClosed    = "its MCP session is closed"
	reasonGone      = "its MCP server no longer knows the session (it restarted or ended it)"
	reasonNotSent   = "its MCP server could not be reached; the request was not sent"
	reasonLost      = "the connection to its MCP server failed after the request was sent"
	reasonTransport = "the connection to its MCP server failed"
	reasonStatus    = "its MCP server answered HTTP %d %s"
	reasonServer    = "its MCP server failed to handle the call"
	reasonRefused   = "its MCP server refused the request as malformed or unsupported"
	reasonURL       = "its MCP server asked the user to complete a step in a browser, which this client does not support"
	reasonTasks     = "its MCP server runs it only as a background task (the MCP tasks extension), which this client does not support"
	reasonTask      = "its MCP server answered with a background task (the MCP tasks extension), which this client cannot follow"
	detailRejected  = "its MCP server rejected the arguments; check them against the tool's parameters"
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

// tasksExtension is the identifier of the MCP tasks extension.
const tasksExtension = "io.modelcontextprotocol/tasks"

// The error.type of failures that are no JSON-RPC error (an HTTP status
// names its own: "503"), after the MCP and HTTP conventions.
const (
	errorTypeToolError     = "tool_error"     // a result with isError
	errorTypeSessionClosed = "session_closed" // the session was closed before the call was written
	errorTypeNotSent       = "not_sent"       // the request never reached the server
	errorTypeResponseLost  = "response_lost"  // the request was sent; its answer never came
	errorTypeInputRequired = "input_required" // the server asked for a person's input
	errorTypeTask          = "task"           // the server answered with a task handle
)

// failure maps the error of a tools/call onto toolsafe's taxonomy, by type,
// JSON-RPC code and what ex saw of the HTTP request, never by text. What
// the protocol says was not acted on (the session was closed before the
// call was written, the server forgot the session, a JSON-RPC error
// returned before the tool ran, a request that never reached the server, a
// 429 or 503) is marked NotApplied or proves itself so; everything else
// (an internal error, a connection broken after the request went out, a
// response stream cut) may have been applied, and a tool with side effects
// is not sent again. The server's text stays in the chain (for DEBUG
// logs), never in the error's text. span, when not nil, gets the JSON-RPC
// code.
func (t *Tool) failure(ctx context.Context, span trace.Span, ex *exchange, err error) error {
	if ctx.Err() != nil {
		// toolsafe knows whether it was the attempt's time, the call's
		// deadline or the caller.
		return err
	}
	switch {
	case errors.Is(err, mcp.ErrSessionMissing) && !t.forgotten(ex, err):
		// The SDK failed the session, and this call running on it, when
		// another request was answered 404: this one was delivered.
		te := middleware.NewToolError("%s", reasonLost).WithCause(err)
		return typed(middleware.Transient(te), errorTypeResponseLost)
	case errors.Is(err, mcp.ErrSessionMissing):
		return typed(refused(reasonGone, middleware.NotApplied(err)), "404")
	case errors.Is(err, mcp.ErrConnectionClosed):
		// The SDK fails a call on a closed connection before writing it.
		return typed(refused(reasonClosed, middleware.NotApplied(err)), errorTypeSessionClosed)
	}
	we, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || we.Code == codeRejected {
		return transportFailure(ex, err)
	}
	if ex.askedForInput() {
		// The server answered the latest round with an input request,
		// which the SDK's own multi round-trip could not fulfil (the
		// client has no handler): the server waits, and did not act.
		return t.needsInput()
	}
	code := codeType(we.Code)
	if span != nil && code != errorTypeOther {
		span.SetAttributes(semconv.RPCResponseStatusCodeKey.String(code))
	}
	return typed(t.codeFailure(ctx, we, err), code)
}

// errorTypeOther is the error.type of a JSON-RPC error whose code is the
// server's own choice (the conventions' value for a type they do not
// know): such codes are unbounded, and would make a metric series each.
const errorTypeOther = "_OTHER"

// codeType is the error.type of a JSON-RPC error with code: the code, in
// JSON-RPC's reserved range (-32768 to -32000, where the protocol's, MCP's
// and the servers' implementation-defined codes are) or 0 (go-sdk's code
// for a handler's plain error); else errorTypeOther.
func codeType(code int64) string {
	if code != 0 && (code < -32768 || code > -32000) {
		return errorTypeOther
	}
	return strconv.FormatInt(code, 10)
}

// forgotten reports whether err, which says the server no longer knows
// the session (mcp.ErrSessionMissing), says so of this call, whose
// request ex recorded: its own request was answered 404, or it was never
// sent, on a session whose calls Transport records. The SDK fails every
// call still running on the session with the same error once one request
// is answered 404: those were delivered, and their outcome is unknown.
// Without a record nothing proves which it was.
func (t *Tool) forgotten(ex *exchange, err error) bool {
	if !errors.Is(err, mcp.ErrSessionMissing) {
		return false
	}
	if posted, _, status, _ := ex.seen(); posted {
		return status == http.StatusNotFound
	}
	return t.conn.records.Load()
}

// transportFailure maps a failure of the transport (the SDK's -32005, or
// an error that is no JSON-RPC error) by what ex saw of the HTTP request.
func transportFailure(ex *exchange, err error) error {
	posted, wrote, status, retryAfter := ex.seen()
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
		status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		// 429 and 503 say the server did not act, and may ask for a wait;
		// a 502 or 504 from a proxy may come after the server acted.
		answer := middleware.FromHTTPResponse(&http.Response{StatusCode: status, Header: http.Header{"Retry-After": {retryAfter}}})
		te := middleware.NewToolError(reasonStatus, status, http.StatusText(status)).WithCause(errors.Join(answer, err))
		return typed(te, strconv.Itoa(status))
	case posted && !wrote:
		te := middleware.NewToolError("%s", reasonNotSent).WithCause(err)
		return typed(middleware.NotApplied(te), errorTypeNotSent)
	case posted:
		// Written, and then no answer, or an answer cut short: the server
		// may have acted. (The 2026-07-28 specification: a client re-issues
		// such a request as a new one, so the first may have run.)
		te := middleware.NewToolError("%s", reasonLost).WithCause(err)
		return typed(middleware.Transient(te), errorTypeResponseLost)
	}
	// No record (a transport not made with Transport, or not HTTP): what
	// the error's types prove, such as a refused dial, decides.
	return middleware.Transient(middleware.NewToolError("%s", reasonTransport).WithCause(err))
}

// codeFailure maps a JSON-RPC error we, in err, onto toolsafe's taxonomy.
func (t *Tool) codeFailure(ctx context.Context, we *jsonrpc.Error, err error) error {
	switch we.Code {
	case jsonrpc.CodeInvalidParams:
		return t.invalidParams(ctx, err)
	case jsonrpc.CodeMethodNotFound:
		return middleware.NewToolError("%s cannot be called: its MCP server takes no tool calls. Do not call it again; use another tool or tell the user it is unavailable.", t.name).WithCause(err)
	case codeMissingClientCapabilities:
		if needsTasks(we) {
			return refused(reasonTasks, middleware.NotApplied(err))
		}
		return refused(reasonRefused, middleware.NotApplied(err))
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest,
		codeHeaderMismatch, codeUnsupportedProtocolVersion:
		// Refused before any tool ran.
		return refused(reasonRefused, middleware.NotApplied(err))
	case codeURLElicitationRequired:
		return refused(reasonURL, middleware.NotApplied(err))
	}
	// -32603 internal error, -32001 unknown, the server's own codes, 0: the
	// tool may have run before it failed.
	return middleware.Transient(middleware.NewToolError(reasonServer).WithCause(err))
}

// needsTasks reports whether a -32021 error names the tasks extension among
// the capabilities it requires.
func needsTasks(we *jsonrpc.Error) bool {
	var data struct {
		RequiredCapabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if len(we.Data) == 0 || json.Unmarshal(we.Data, &data) != nil {
		return false
	}
	_, ok := data.RequiredCapabilities.Extensions[tasksExtension]
	return ok
}

// invalidParams is the answer for a call the server refused as invalid
// params, which is also its answer to a tool it does not know: the tool is
// gone when the server no longer lists it, else the arguments are invalid.
func (t *Tool) invalidParams(ctx context.Context, cause error) error {
	if !t.listed(ctx) {
		return t.gone(cause)
	}
	return &middleware.ArgsError{Problems: []string{detailRejected}, Cause: cause}
}

// toolError is the answer for a result with isError, whose text is the
// server's. A TypeScript-SDK server answers a tool it does not know, and
// input its schema rejects, with such a result whose one text block is the
// SDK's rendering of an invalid-params error ("MCP error -32602: Tool x not
// found", "MCP error -32602: Input validation error: ..."), where the Go SDK
// answers a JSON-RPC error: that is mapped as -32602 is. Any other is a
// tool-error whose text the model sees (middleware.UpstreamToolError).
// error.type is "tool_error" either way, as the MCP conventions name a
// result with isError.
func (t *Tool) toolError(ctx context.Context, res *mcp.CallToolResult, text string) error {
	if code, ok := sdkErrorCode(res); ok && code == jsonrpc.CodeInvalidParams {
		return typed(t.invalidParams(ctx, serverText(text)), errorTypeToolError)
	}
	if text == "" {
		return typed(middleware.NewToolError("%s failed; its MCP server gave no reason.", t.name), errorTypeToolError)
	}
	return typed(middleware.UpstreamToolError(text), errorTypeToolError)
}

// sdkPrefix starts the text of an McpError as the TypeScript SDK renders
// it into an isError result: "MCP error <code>: <message>".
const sdkPrefix = "MCP error "

// sdkErrorCode returns the JSON-RPC code of an isError result that is a
// TypeScript-SDK error rendered as text (one text block, "MCP error
// -32602: ..."), and whether it is one.
func sdkErrorCode(res *mcp.CallToolResult) (int64, bool) {
	if len(res.Content) != 1 {
		return 0, false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc == nil || !strings.HasPrefix(tc.Text, sdkPrefix) {
		return 0, false
	}
	num, _, found := strings.Cut(tc.Text[len(sdkPrefix):], ":")
	if !found {
		return 0, false
	}
	code, err := strconv.ParseInt(num, 10, 32)
	return code, err == nil
}

// serverText is a server's text kept as the cause of a failure, for DEBUG
// logs only.
type serverText string

func (s serverText) Error() string { return string(s) }

// typedError is a failure of a tools/call with the error.type the MCP
// semantic conventions give it: "tool_error" for a result with isError,
// the JSON-RPC code for a JSON-RPC error. otelhook puts it on the attempt
// span (it reads ErrorType).
type typedError struct {
	err     error
	errType string
}

func (e *typedError) Error() string     { return e.err.Error() }
func (e *typedError) Unwrap() error     { return e.err }
func (e *typedError) ErrorType() string { return e.errType }

func typed(err error, errType string) error { return &typedError{err: err, errType: errType} }

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
	session, _ := t.conn.current()
	for def, err := range session.Tools(ctx, nil) {
		if err != nil {
			return true
		}
		if def.Name == t.def.Name {
			return true
		}
	}
	return false
}
