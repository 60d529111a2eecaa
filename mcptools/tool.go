package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// Tool is one tool of an MCP server as a langchaingo tool. Make it with List
// or New. It is safe for concurrent use, as its session is, and never
// changes after it is made.
type Tool struct {
	conn        *conn
	def         *mcp.Tool
	name        string // for the agent and the model
	description string
	schema      *argschema.Schema
	checked     tools.Tool // the schema's check around send
	spans       bool
	propagator  propagation.TextMapPropagator // nil: the global one, at each call
	hints       middleware.Hints
	metric      *operationMetric
	// inputApprover is asked the server's input requests; nil: nobody.
	inputApprover approval.Approver
}

var (
	_ tools.Tool            = (*Tool)(nil)
	_ argschema.Schemer     = (*Tool)(nil)
	_ middleware.HintedTool = (*Tool)(nil)
)

// permissive is the schema of a tool whose definition has none: any object.
const permissive = `{"type":"object"}`

// New returns the tool of session described by def, as tools/list returned
// it (see List, which calls New for each tool listed). The input schema is
// compiled once, here. New returns an error when session or def is nil, def
// has no name, WithRename makes the name empty or one that ends with
// " (input requested)", in any case (how the approvals inbox names a server's input
// requests; see WithInputApprover), or def's input schema cannot
// be compiled (see argschema.Compile: it must be a JSON Schema of an object
// and may not refer to other documents). A def without an input schema takes
// any JSON object.
func New(session *mcp.ClientSession, def *mcp.Tool, opts ...Option) (*Tool, error) {
	if session == nil {
		return nil, errNilSession
	}
	c := newConfig(opts)
	return newTool(newConn(session, c.reconnect), def, c)
}

var errNilSession = errors.New("mcptools: the session is nil: pass the *mcp.ClientSession that client.Connect returned")

func newTool(cn *conn, def *mcp.Tool, c config) (*Tool, error) {
	switch {
	case def == nil:
		return nil, errors.New("mcptools: the tool definition is nil")
	case def.Name == "":
		return nil, errors.New("mcptools: the server listed a tool without a name")
	}
	name := def.Name
	if c.rename != nil {
		name = c.rename(def.Name)
		if name == "" {
			return nil, fmt.Errorf("mcptools: tool %q: WithRename made its name empty", def.Name)
		}
	}
	if len(name) >= len(inputRequested) && strings.EqualFold(name[len(name)-len(inputRequested):], inputRequested) {
		return nil, fmt.Errorf("mcptools: tool %q: its name ends as the approvals inbox names a server's input requests (%q), so a person could not tell a call of it from a question; give it another name with WithRename, or leave it out with WithFilter", def.Name, inputRequested)
	}
	raw := []byte(permissive)
	if def.InputSchema != nil {
		var err error
		if raw, err = json.Marshal(def.InputSchema); err != nil {
			return nil, fmt.Errorf("mcptools: tool %q: its input schema does not marshal to JSON: %w", def.Name, err)
		}
	}
	schema, err := argschema.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("mcptools: tool %q: its input schema: %w", def.Name, err)
	}
	description := def.Description
	if description == "" {
		description = def.Title
	}
	t := &Tool{
		conn:        cn,
		def:         def,
		name:        name,
		description: description,
		schema:      schema,
		spans:       !c.noSpans,
		propagator:  c.propagator,
		hints:       hintsOf(def, c),
		metric:      newOperationMetric(c.meters, name),

		inputApprover: c.inputApprover,
	}
	t.checked = schema.Middleware()(middleware.Func(name, description, t.send))
	return t, nil
}

// Name returns the tool's name: its MCP name, or what WithRename made of it.
func (t *Tool) Name() string {
	if t == nil {
		return ""
	}
	return t.name
}

// Description returns the MCP tool's description, or its title when it has
// no description.
func (t *Tool) Description() string {
	if t == nil {
		return ""
	}
	return t.description
}

// MCPName returns the name the server knows the tool by, which tools/call
// uses.
func (t *Tool) MCPName() string {
	if t == nil || t.def == nil {
		return ""
	}
	return t.def.Name
}

// Definition returns the tool's definition as the server listed it, with its
// annotations (read-only, destructive and idempotent hints) and output
// schema. The caller must not modify it.
func (t *Tool) Definition() *mcp.Tool {
	if t == nil {
		return nil
	}
	return t.def
}

// ArgsSchema returns the tool's input schema as JSON text: the MCP input
// schema, or {"type":"object"} when the server gave none. The caller must not
// modify it.
func (t *Tool) ArgsSchema() json.RawMessage {
	if t == nil {
		return nil
	}
	return t.schema.Source()
}

// Schema returns the tool's compiled input schema. toolsafe.Wrap checks
// each input against it before any attempt (the tool is an
// argschema.Schemer); Call checks it too.
func (t *Tool) Schema() *argschema.Schema {
	if t == nil {
		return nil
	}
	return t.schema
}

// SchemaOf returns the compiled input schema of t when it is a *Tool, and
// nil otherwise. toolsafe.Wrap already checks an MCP tool's input against
// it; SchemaOf serves code that checks inputs itself.
func SchemaOf(t tools.Tool) *argschema.Schema {
	mt, ok := t.(*Tool)
	if !ok {
		return nil
	}
	return mt.Schema()
}

// errNotMade is what a Tool not made by List or New answers.
var errNotMade = errors.New("mcptools: this Tool was not made by mcptools.List or mcptools.New, so it has no session")

// Call checks input, the tool's arguments as one JSON object ("" stands
// for {}), against the input schema, then sends tools/call and returns the
// result's content as text. On its own (toolsafe turns these into what the
// model sees) it returns a *middleware.Failure of kind args-invalid for
// input the schema or the server rejects, a *middleware.ToolError for a
// result with isError, an input request or a tool the server no longer
// offers, ctx's error when ctx ended, and otherwise an error that toolsafe
// classifies by type (middleware.NotApplied where nothing was applied) and
// whose text never holds the server's. It is safe for concurrent use.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	if t == nil || t.checked == nil {
		return "", middleware.Permanent(errNotMade)
	}
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	return t.checked.Call(ctx, input)
}

// send sends tools/call with input, which the schema accepted. A call that
// its session never delivered (closed, or forgotten by the server) is sent
// again at once on a new session when WithReconnect allows it.
func (t *Tool) send(ctx context.Context, input string) (string, error) {
	span := trace.SpanFromContext(ctx)
	if !t.spans || !span.IsRecording() {
		span = nil
	} else {
		ctx = context.WithValue(ctx, spanKey{}, span) // for Transport's request ID
	}
	ex := &exchange{}
	ctx = withExchange(ctx, ex)
	session, attrs := t.conn.current()
	params := &mcp.CallToolParams{Name: t.def.Name, Arguments: json.RawMessage(input), Meta: callMeta(ctx, t.propagator)}
	start := time.Now()
	res, err := t.callOn(ctx, span, session, attrs, params)
	if posted, _, _, _ := ex.seen(); posted {
		t.conn.records.Store(true)
	}
	if err != nil && ctx.Err() == nil && t.conn.reconnect != nil && t.undelivered(ex, err) {
		fresh, rerr := t.conn.renew(ctx, session)
		if rerr != nil {
			t.metric.record(ctx, start, attrs, errorTypeSessionClosed, "")
			if ctx.Err() != nil {
				return "", rerr
			}
			te := middleware.NewToolError("%s", reasonClosed).WithCause(errors.Join(rerr, err))
			return "", typed(middleware.NotApplied(te), errorTypeSessionClosed)
		}
		session = fresh
		*ex = exchange{}
		_, attrs = t.conn.current()
		start = time.Now()
		res, err = t.callOn(ctx, span, session, attrs, params)
	}
	if err == nil && res.NeedsInput() && t.inputApprover != nil {
		// A question for a person: asked, and answered on the same session.
		if res, err = t.askPerson(ctx, session, params, res); err != nil {
			if _, paused := errors.AsType[*approval.Required](err); paused || errors.Is(err, ctx.Err()) {
				return "", err
			}
			if _, told := errors.AsType[*typedError](err); told {
				t.metric.record(ctx, start, attrs, errorTypeOf(err), "")
				return "", err
			}
		}
	}
	if err != nil {
		err = t.failure(ctx, span, ex, err)
		t.metric.record(ctx, start, attrs, errorTypeOf(err), statusCodeOf(err))
		return "", err
	}
	out, err := t.result(ctx, res)
	t.metric.record(ctx, start, attrs, errorTypeOf(err), "")
	return out, err
}

// IdempotencyKeyMeta is the params._meta key under which each tools/call
// carries the call's idempotency key (middleware.IdempotencyKey): the same
// for every attempt of one call, on whichever session sends it, and for
// the call a resumed run sends again, different for every other call. A
// server that applies the requests carrying one key once lets a tool be
// declared with a key (toolsafe.WithSideEffects(SideEffectsWithKey), or
// side_effects: idempotent in a policies file), which toolsafe sends again
// after an outcome that is unknown. MCP has no key of its own yet; the
// name follows its rule for _meta keys (a reverse-DNS prefix that is not
// the protocol's).
const IdempotencyKeyMeta = "io.github.toolsafe/idempotency-key"

// callMeta is the params._meta of a tools/call sent with ctx: its trace
// context (see traceMeta) and its idempotency key; nil when there is
// neither.
func callMeta(ctx context.Context, p propagation.TextMapPropagator) mcp.Meta {
	meta := traceMeta(ctx, p)
	if key := middleware.IdempotencyKey(ctx); key != "" {
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[IdempotencyKeyMeta] = key
	}
	return meta
}

// callOn sends params on session, with attrs on span.
func (t *Tool) callOn(ctx context.Context, span trace.Span, session *mcp.ClientSession, attrs []attribute.KeyValue, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if span != nil {
		span.SetAttributes(attrs...)
	}
	return session.CallTool(ctx, params)
}

// undelivered reports whether err says the session never delivered the
// call, whose request ex recorded: the server answered its request 404
// (it restarted, or forgot the session; see forgotten), or the connection
// was closed before the call was written.
func (t *Tool) undelivered(ex *exchange, err error) bool {
	return t.forgotten(ex, err) || errors.Is(err, mcp.ErrConnectionClosed)
}

// result turns the result of a tools/call into the model's text or a
// failure.
func (t *Tool) result(ctx context.Context, res *mcp.CallToolResult) (string, error) {
	switch {
	case res.NeedsInput():
		return "", t.needsInput()
	case len(res.Content) == 0 && res.StructuredContent == nil && !res.IsError && isTask(res):
		// The call runs on at the server, where this client cannot follow
		// it (go-sdk decodes no task handle): its outcome is unknown.
		return "", typed(middleware.Permanent(middleware.NewToolError("%s", reasonTask)), errorTypeTask)
	}
	text := observation(res)
	if res.IsError {
		return "", t.toolError(ctx, res, text)
	}
	return text, nil
}

// needsInput is the answer for a call its server answered with an input
// request (InputRequiredResult): a person's input, which this client cannot
// ask for. It is a tool-error, not retried: the server did not act.
func (t *Tool) needsInput() error {
	return typed(middleware.NewToolError("%s needs a person's input: its MCP server asked a question (an input request) that this client cannot put to anyone yet. "+
		"Do not call %s again for this request; tell the user it needs them to answer its server in another MCP client.", t.name, t.name), errorTypeInputRequired)
}

// isTask reports whether res came as a task handle (resultType "task", the
// MCP tasks extension), which the SDK decodes as a result without content.
func isTask(res *mcp.CallToolResult) bool {
	b, err := json.Marshal(res)
	if err != nil {
		return false
	}
	var r struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(b, &r) == nil && r.ResultType == "task"
}

// Hints returns what the tool's annotations say of it, and whether they
// are trusted (WithTrusted) and under which name (WithServerName):
// toolsafe.New takes its side effects from them (middleware.Hints), unless
// an option gives them. No annotations means the MCP defaults: not
// read-only, destructive, not idempotent.
func (t *Tool) Hints() middleware.Hints {
	if t == nil {
		return middleware.Hints{}
	}
	return t.hints
}

// hintsOf returns the hints of def's annotations.
func hintsOf(def *mcp.Tool, c config) middleware.Hints {
	h := middleware.Hints{Trusted: c.trusted, Server: c.server}
	if a := def.Annotations; a != nil {
		// The SDK decodes readOnlyHint and idempotentHint as plain bools
		// (false when absent): only true is taken as said.
		if a.ReadOnlyHint {
			h.ReadOnly = &a.ReadOnlyHint
		}
		if a.IdempotentHint {
			h.Idempotent = &a.IdempotentHint
		}
		h.Destructive = a.DestructiveHint
	}
	return h
}
