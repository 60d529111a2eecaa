package adktools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// host is what one Run keeps for the attempts of its call: ADK's context
// and arguments, and the answer of the attempt that succeeded.
type host struct {
	actx  agent.Context
	args  any
	input string
	// answerWith is, for a call ADK resumed with the user's answer, the
	// adk_request_confirmation call that answer named: a pause of this
	// call is asked again through it (see Tool.pause).
	answerWith string

	mu   sync.Mutex
	done bool
	live *answer
}

// answer is one attempt's result map and its JSON.
type answer struct {
	res map[string]any
	out string
}

type hostKey struct{}

func withHost(ctx context.Context, h *host) context.Context {
	return context.WithValue(ctx, hostKey{}, h)
}

func hostFrom(ctx context.Context) *host {
	h, _ := ctx.Value(hostKey{}).(*host)
	return h
}

// keep records the answer of an attempt that returned while its call was
// still running; an attempt given up on that returns later is dropped.
func (h *host) keep(a *answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done {
		h.live = a
	}
}

// finish ends the call: it returns the answer kept, and drops later ones.
func (h *host) finish() *answer {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = true
	return h.live
}

// CallID returns the model's tool-call ID of the ADK tool call ctx belongs
// to (agent.Context.FunctionCallID), or "" outside one: New gives it to
// toolsafe.WithCallIDFunc. ADK makes up "adk-<uuid>" for a call the model
// gave no ID.
func CallID(ctx context.Context) string {
	if h := hostFrom(ctx); h != nil {
		return h.actx.FunctionCallID()
	}
	if actx, ok := ctx.(agent.Context); ok {
		return actx.FunctionCallID()
	}
	return ""
}

// inner is the ADK tool as the tool inside toolsafe's layers: one attempt
// is one Run of it, on an ADK context whose Go context is the attempt's.
type inner struct {
	t      FunctionTool
	schema []byte // the declaration's ParametersJsonSchema, or nil
}

var _ argschema.Schemer = (*inner)(nil)

func newInner(t FunctionTool) (*inner, error) {
	in := &inner{t: t}
	if d := t.Declaration(); d != nil && d.ParametersJsonSchema != nil {
		b, err := json.Marshal(d.ParametersJsonSchema)
		if err != nil {
			return nil, fmt.Errorf("adktools: tool %q: its ParametersJsonSchema does not marshal to JSON: %w", t.Name(), err)
		}
		in.schema = b
	}
	return in, nil
}

// mcpInner is the inner tool of an MCP server's tool that ADK's
// mcptoolset made. ADK drops the tool's annotations, so nothing is known
// of it but that it is an MCP tool: it has the specification's defaults
// (not read-only, destructive, not idempotent), and toolsafe.New gives it
// side effects without a key unless an option says otherwise.
type mcpInner struct{ *inner }

var _ middleware.HintedTool = mcpInner{}

// Hints are the MCP defaults: nothing declared, nothing trusted.
func (mcpInner) Hints() middleware.Hints { return middleware.Hints{} }

// mcpToolsetPkg is the package of ADK's MCP tools.
const mcpToolsetPkg = "google.golang.org/adk/v2/tool/mcptoolset"

// fromMCP reports whether t is a tool of ADK's mcptoolset.
func fromMCP(t FunctionTool) bool {
	rt := reflect.TypeOf(t)
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	return rt.PkgPath() == mcpToolsetPkg
}

func (in *inner) Name() string        { return in.t.Name() }
func (in *inner) Description() string { return in.t.Description() }

// ArgsSchema is the declaration's parameter schema: toolsafe checks every
// input against it before any attempt.
func (in *inner) ArgsSchema() json.RawMessage { return in.schema }

// errNoHost is what an attempt made outside Tool.Run answers.
var errNoHost = middleware.Permanent(errors.New("adktools: the tool was called outside an ADK tool call; call it through adktools.Tool.Run"))

// Call runs one attempt: the ADK tool's Run with the arguments ADK decoded
// (or input, decoded, when a layer changed it).
func (in *inner) Call(ctx context.Context, input string) (string, error) {
	h := hostFrom(ctx)
	if h == nil {
		return "", errNoHost
	}
	args := h.args
	if input != h.input {
		var m map[string]any
		if err := json.Unmarshal([]byte(input), &m); err != nil {
			return "", middleware.Permanent(err)
		}
		args = m
	}
	res, err := in.t.Run(&attemptContext{Context: h.actx, ctx: ctx}, args)
	if err != nil {
		return "", confirmationError(ctx, in.t.Name(), input, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return "", middleware.Permanent(fmt.Errorf("adktools: the result of %s does not marshal to JSON: %w", in.t.Name(), err))
	}
	if ctx.Err() == nil {
		h.keep(&answer{res: res, out: string(b)})
	}
	return string(b), nil
}

// confirmationError turns the confirmation errors of an ADK tool that asks
// for confirmation itself (functiontool.Config.RequireConfirmation) into
// toolsafe's: a pause, and a denial. Other errors are the tool's own.
func confirmationError(ctx context.Context, name, input string, err error) error {
	switch {
	case errors.Is(err, tool.ErrConfirmationRequired):
		return &approval.Required{Tool: name, CallID: CallID(ctx), Input: input,
			Reason: "the tool asks for the user's confirmation", Attempt: middleware.AttemptNumber(ctx),
			IdempotencyKey: middleware.IdempotencyKey(ctx)}
	case errors.Is(err, tool.ErrConfirmationRejected):
		return rejected{}
	}
	return err
}

// rejected is a call the user rejected through ADK's confirmation.
type rejected struct{}

func (rejected) Error() string { return "adktools: the user rejected the call" }

// Kind is approval-denied: the model is told not to call it again.
func (rejected) Kind() middleware.Kind { return middleware.KindApprovalDenied }

// attemptContext is ADK's context of the call with the attempt's Go
// context: its deadline, cancellation and values (the call record, the
// idempotency key, the attempt span).
type attemptContext struct {
	agent.Context
	ctx context.Context
}

func (a *attemptContext) Deadline() (time.Time, bool) { return a.ctx.Deadline() }
func (a *attemptContext) Done() <-chan struct{}       { return a.ctx.Done() }
func (a *attemptContext) Err() error                  { return a.ctx.Err() }
func (a *attemptContext) Value(key any) any           { return a.ctx.Value(key) }
