package adktools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/tmc/langchaingo/tools"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

// FunctionTool is the kind of ADK tool that can be wrapped: a function
// tool, with its declaration and its Run, as functiontool.New,
// functiontool.NewStreaming and agenttool.New make. New, Wrap and WrapAll
// take the tool.Tool those constructors return and refuse, with an error
// (ErrNotFunctionTool), a tool that is not one.
type FunctionTool interface {
	tool.Tool
	Declaration() *genai.FunctionDeclaration
	Run(ctx agent.Context, args any) (map[string]any, error)
}

// ErrNotFunctionTool is the error of New, Wrap and WrapAll for a tool that
// is not a FunctionTool: a tool the model runs itself (geminitool's), or
// one that adds to the model request without a Run of its own
// (loadartifactstool's, preloadmemorytool's). toolsafe guards a call it
// can make, so such a tool goes into llmagent.Config.Tools as it is.
var ErrNotFunctionTool = errors.New("adktools: not a function tool")

// Tool is an ADK function tool wrapped by toolsafe: give it to
// llmagent.Config.Tools in place of the tool it wraps. It has that tool's
// name, description and declaration. It is safe for concurrent use when the
// wrapped tool is; its configuration never changes after New or Wrap.
type Tool struct {
	given tool.Tool    // the tool given; nil only for a nil tool given to Wrap
	inner FunctionTool // given, when it is a function tool
	safe  *toolsafe.Tool
	err   error
}

var _ FunctionTool = (*Tool)(nil)

// New wraps t, an ADK function tool (see FunctionTool), with toolsafe's
// layers, configured by opts as toolsafe.New is; the call ID comes from ADK
// (CallID) unless an option says otherwise, and the arguments are checked
// against the declaration's ParametersJsonSchema unless an option gives a
// schema. A tool of ADK's mcptoolset, an MCP server's, has side effects
// without a key unless an option says otherwise (toolsafe.WithSideEffects):
// ADK drops its annotations, and with none the MCP specification takes a
// tool as not read-only and not idempotent, so it is not sent again after an
// attempt that may have landed. It returns an error when t is nil, not a
// function tool (ErrNotFunctionTool) or long-running, or an option is
// invalid (toolsafe.ErrConfig, naming every problem).
func New(t tool.Tool, opts ...toolsafe.Option) (*Tool, error) {
	ft, err := functionTool(t)
	if err != nil {
		return nil, err
	}
	in, err := newInner(ft)
	if err != nil {
		return nil, err
	}
	var lt tools.Tool = in
	if fromMCP(ft) {
		lt = mcpInner{in}
	}
	safe, err := toolsafe.New(lt, append([]toolsafe.Option{toolsafe.WithCallIDs(toolsafe.CallIDFunc(CallID))}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("adktools: %w", err)
	}
	return &Tool{given: t, inner: ft, safe: safe}, nil
}

// functionTool is t as a FunctionTool that can be wrapped, or the error
// saying why it cannot be.
func functionTool(t tool.Tool) (FunctionTool, error) {
	if isNil(t) {
		return nil, errors.New("adktools: the tool to wrap is nil: pass an ADK function tool, as functiontool.New returns")
	}
	ft, ok := t.(FunctionTool)
	if !ok {
		return nil, fmt.Errorf("%w: tool %q (%T) has no Declaration and Run of its own, so toolsafe cannot make its calls; "+
			"give it to llmagent.Config.Tools as it is, and wrap function tools (functiontool.New)", ErrNotFunctionTool, t.Name(), t)
	}
	if t.IsLongRunning() {
		return nil, fmt.Errorf("adktools: tool %q is long-running: toolsafe cannot guard a call whose answer comes later; wrap a tool that answers in its Run", t.Name())
	}
	return ft, nil
}

// isNil reports whether t is nil, or a nil pointer in an interface.
func isNil(t tool.Tool) bool {
	if t == nil {
		return true
	}
	v := reflect.ValueOf(t)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Wrap is New for use in an expression, as when building an agent's tool
// list from what functiontool.New returns. When New would return an error,
// every Run of the Tool returns it (ADK hands its text to the model); check
// Err, or use New, to catch it early.
func Wrap(t tool.Tool, opts ...toolsafe.Option) *Tool {
	w, err := New(t, opts...)
	if err == nil {
		return w
	}
	if isNil(t) {
		return &Tool{err: err}
	}
	ft, _ := t.(FunctionTool)
	return &Tool{given: t, inner: ft, err: err}
}

// Err returns the configuration error of a Tool made by Wrap, or nil.
func (t *Tool) Err() error { return t.err }

// Name returns the wrapped tool's name ("" for a nil tool given to Wrap).
func (t *Tool) Name() string {
	if t.given == nil {
		return ""
	}
	return t.given.Name()
}

// Description returns the wrapped tool's description.
func (t *Tool) Description() string {
	if t.given == nil {
		return ""
	}
	return t.given.Description()
}

// IsLongRunning returns false: New refuses long-running tools.
func (t *Tool) IsLongRunning() bool { return false }

// Declaration returns the wrapped tool's declaration, which ADK sends the
// model. For a tool Wrap could not wrap because it is not a function tool,
// it declares the tool's name and description, so that the model's call of
// it is answered with Err rather than never made.
func (t *Tool) Declaration() *genai.FunctionDeclaration {
	switch {
	case t.inner != nil:
		return t.inner.Declaration()
	case t.given != nil:
		return &genai.FunctionDeclaration{Name: t.given.Name(), Description: t.given.Description()}
	}
	return nil
}

// ProcessRequest adds the tool to the model request, as ADK's function
// tools do, so that ADK calls this Tool, not the one it wraps.
func (t *Tool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return toolutils.PackTool(req, t)
}

// Run runs one call of the model through toolsafe's layers. The answer is
// the tool's result map; a failure meant for the model is returned as the
// *middleware.Failure, whose text (toolsafe's message, never the upstream's)
// ADK gives the model as {"error": ...}; an approval pause asks the user
// through ADK's tool confirmation and returns {"status": ...}.
func (t *Tool) Run(ctx agent.Context, args any) (map[string]any, error) {
	if t.err != nil {
		return nil, t.err
	}
	input, err := argsJSON(args)
	if err != nil {
		return nil, &middleware.Failure{Kind: middleware.KindArgsInvalid, Tool: t.Name(), Cause: err}
	}
	h := &host{actx: ctx, args: args, input: input}
	gctx, ok := resumed(ctx, withHost(ctx, h), h, t.Name(), input)
	if !ok {
		return nil, &middleware.Failure{Kind: middleware.KindToolError, Tool: t.Name(), Cause: errUnasked(t.Name())}
	}
	r := t.safe.Run(gctx, input)
	live := h.finish()
	switch {
	case r.Failure == nil && live != nil && !r.Replayed && r.Fallback == "" && live.out == r.Output:
		return live.res, nil
	case r.Failure == nil && r.Fallback != "":
		return map[string]any{"result": r.Observation()}, nil
	case r.Failure == nil:
		return resultMap(r.Output), nil
	case r.Failure.Kind == middleware.KindApprovalRequired:
		return t.pause(ctx, gctx, h, r)
	case r.Failure.Kind == middleware.KindCanceled:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, context.Canceled
	}
	return nil, r.Failure
}

// pause asks for the user's confirmation of a call that paused, and keeps
// the pause in the session's state for the resumed call. A call that
// pauses again once ADK resumed it is asked through the request the user
// answered (Requests finds it on the event of this answer): ADK v2.2.0
// turns no confirmation requested on its resume path into a request of its
// own (google/adk-go#1538).
func (t *Tool) pause(ctx agent.Context, gctx context.Context, h *host, r middleware.Result) (map[string]any, error) {
	var ar *approval.Required
	if !errors.As(r.Failure, &ar) {
		ar = &approval.Required{Tool: t.Name(), CallID: r.CallID, Attempt: middleware.AttemptNumber(gctx)}
	}
	if ar.Tool != t.Name() || ar.CallID != ctx.FunctionCallID() {
		// Another call paused: the fallback's alternative, behind this
		// tool's gate. ADK confirms only the call the model made, and
		// runs that call again when confirmed, so no confirmation could
		// let the alternative through: say so instead of "waiting".
		return nil, &middleware.Failure{Kind: middleware.KindToolError, Tool: t.Name(), Cause: errFallbackUnasked(t.Name(), ar.Tool)}
	}
	p := newPayload(ar, h.answerWith)
	if err := ctx.RequestConfirmation(ar.Error(), p.asMap()); err != nil {
		return nil, fmt.Errorf("adktools: %s needs approval, but ADK could not ask for it: %w", t.Name(), err)
	}
	if err := ctx.State().Set(pauseKey(ctx.FunctionCallID()), p.asMap()); err != nil {
		return nil, fmt.Errorf("adktools: %s needs approval, but its pause could not be kept in the session: %w", t.Name(), err)
	}
	if h.answerWith != "" {
		return map[string]any{"status": fmt.Sprintf("the user was asked again to confirm this call (attempt %d); waiting for the answer; do not call it again", ar.Attempt)}, nil
	}
	return map[string]any{"status": "waiting for the user's confirmation of this call; do not call it again"}, nil
}

// errFallbackUnasked is the model's answer to a call whose fallback alt
// paused for approval: ADK's confirmation cannot ask for it.
func errFallbackUnasked(tool, alt string) error {
	return middleware.NewToolError("%s did not succeed, and its fallback %s needs a person's approval, which cannot be asked "+
		"through ADK's confirmation (it confirms only the call you made): %s was not run. Go on without it.", tool, alt, alt)
}

// errUnasked is the model's answer to a call ADK ran on a confirmation
// that decides nothing: one the model made up, one for another input than
// the call that paused, or one answered already. Nothing ran, no approver
// was asked, and a pause still waiting is left as it was.
func errUnasked(tool string) error {
	return middleware.NewToolError("%s was not run: the confirmation it came with answers no request of toolsafe's that is waiting "+
		"(it was made up, or answered already), so it decides nothing. Do not ask for confirmations yourself.", tool)
}

// argsJSON is ADK's decoded arguments as toolsafe's input: a JSON object.
// A string among them (key or value) that is not UTF-8 is refused:
// encoding/json would write it with U+FFFD in place of its bytes, so the
// approver and the run ledger would see text other than what the tool is
// given, and two different arguments would match one grant.
func argsJSON(args any) (string, error) {
	if args == nil {
		return "{}", nil
	}
	if err := checkUTF8(reflect.ValueOf(args), 0); err != nil {
		return "", err
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("adktools: the arguments do not marshal to JSON: %w", err)
	}
	return string(b), nil
}

// resultMap is an answer as ADK's result map: a JSON object as it is,
// anything else under "result".
func resultMap(out string) map[string]any {
	var v any
	if json.Unmarshal([]byte(out), &v) != nil {
		return map[string]any{"result": out}
	}
	if m, ok := v.(map[string]any); ok && m != nil {
		return m
	}
	return map[string]any{"result": v}
}

// maxArgsDepth bounds how deep checkUTF8 follows the arguments.
const maxArgsDepth = 10000

var errArgsNotUTF8 = middleware.InvalidArgs("an argument is not UTF-8 text; send it as UTF-8 text, as JSON requires")

// checkUTF8 returns an args-invalid error when a string in v, a map key
// included, is not UTF-8, or v nests deeper than maxArgsDepth.
func checkUTF8(v reflect.Value, depth int) error {
	if depth > maxArgsDepth {
		return middleware.InvalidArgs("the arguments nest too deep")
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return errArgsNotUTF8
		}
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			return checkUTF8(v.Elem(), depth+1)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := checkUTF8(it.Key(), depth+1); err != nil {
				return err
			}
			if err := checkUTF8(it.Value(), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // []byte: encoding/json writes it as base64
		}
		for i := range v.Len() {
			if err := checkUTF8(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if err := checkUTF8(v.Field(i), depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
