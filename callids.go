package toolsafe

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/toolsafe/toolsafe/internal/typednil"

	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/schema"
)

// CallIDs hands the model's tool-call IDs from langchaingo's executor to
// wrapped tools (for Result.CallID and gen_ai.tool.call.id): give the same
// CallIDs to the executor as its callbacks handler and to the tools with
// WithCallIDs (see ExampleCallIDs). It is a CallIDSource. IDs are kept per context, so concurrent
// runs never take each other's. Safe for concurrent use; use NewCallIDs.
type CallIDs struct {
	callbacks.SimpleHandler

	mu      sync.Mutex
	pending map[any]pendingCall
}

type pendingCall struct {
	tool, input, id string
}

// maxPending bounds the IDs kept for contexts whose tool was never called
// (an unknown tool name, a tool not wrapped with WithCallIDs).
const maxPending = 1024

var (
	_ callbacks.Handler = (*CallIDs)(nil)
	_ CallIDSource      = (*CallIDs)(nil)
)

// NewCallIDs returns an empty CallIDs.
func NewCallIDs() *CallIDs {
	return &CallIDs{pending: make(map[any]pendingCall)}
}

// HandleAgentAction keeps action.ToolID for the call to action.Tool with
// action.ToolInput on ctx that the executor makes next. An action with no
// ToolID drops any pending ID on ctx.
func (c *CallIDs) HandleAgentAction(ctx context.Context, action schema.AgentAction) {
	k := ctxKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if action.ToolID == "" {
		delete(c.pending, k)
		return
	}
	if _, ok := c.pending[k]; !ok && len(c.pending) >= maxPending {
		for old := range c.pending {
			delete(c.pending, old)
			break
		}
	}
	c.pending[k] = pendingCall{tool: action.Tool, input: trimInput(action.ToolInput), id: action.ToolID}
}

// HandleAgentFinish drops any pending ID on ctx.
func (c *CallIDs) HandleAgentFinish(ctx context.Context, _ schema.AgentFinish) {
	c.mu.Lock()
	delete(c.pending, ctxKey(ctx))
	c.mu.Unlock()
}

// CallID returns, and forgets, the ID the executor announced on ctx for a
// call to tool with input; "" if none. A nil *CallIDs answers "".
func (c *CallIDs) CallID(ctx context.Context, tool, input string) string {
	if c == nil {
		return ""
	}
	k := ctxKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[k]
	// The executor looks tools up by name case-insensitively.
	if !ok || !strings.EqualFold(p.tool, tool) || p.input != trimInput(input) {
		return ""
	}
	delete(c.pending, k)
	return p.id
}

// trimInput is the input as the executor hands it to the tool.
func trimInput(s string) string { return strings.TrimSuffix(s, "\nObservation:") }

// ctxKey is ctx itself as a map key, or nil for a context type that cannot
// be compared (then all such contexts share one pending ID).
func ctxKey(ctx context.Context) any {
	if ctx == nil || !reflect.TypeOf(ctx).Comparable() {
		return nil
	}
	return ctx
}

// CallIDSource gives a wrapped tool the model's ID for each call (see
// WithCallIDs): *CallIDs for langchaingo's executor, CallIDFunc for a host
// that carries the ID in the call's context. It must be safe for
// concurrent use.
type CallIDSource interface {
	// CallID returns the model's ID for the call of tool with input on
	// ctx, or "" when it knows none (the call then gets a made-up ID).
	CallID(ctx context.Context, tool, input string) string
}

// CallIDFunc is a CallIDSource that reads the ID from the context of each
// call, for hosts that carry it there (Eino's compose.GetToolCallID, ADK's
// agent.Context.FunctionCallID): WithCallIDs(CallIDFunc(f)). A nil
// CallIDFunc, or "" from it, leaves the call a made-up ID.
type CallIDFunc func(ctx context.Context) string

// CallID returns f(ctx); tool and input are not consulted.
func (f CallIDFunc) CallID(ctx context.Context, _, _ string) string {
	if f == nil {
		return ""
	}
	return f(ctx)
}

// WithCallIDs makes the tool take the model's tool-call ID from src, for
// Result.CallID, the call record (middleware.CallID) and the span attribute
// gen_ai.tool.call.id: a *CallIDs given to langchaingo's executor, or a
// CallIDFunc reading the host's context. It is the one way to name calls.
// Nil means none: every call gets a random ID.
// A later WithCallIDs replaces an earlier one.
func WithCallIDs(src CallIDSource) Option {
	if typednil.Is(src) {
		src = nil // a nil *CallIDs or CallIDFunc, as nil itself
	}
	return optionFunc(func(c *config) { c.callIDs = src })
}

// WithCallIDFunc makes the tool take the model's tool-call ID from the
// context of each call through f (see CallIDFunc). A nil f means none.
// Like WithCallIDs, whose setting it is, a later one replaces an earlier
// one, whichever of the two it was.
//
// Deprecated: use WithCallIDs(CallIDFunc(f)).
func WithCallIDFunc(f func(ctx context.Context) string) Option {
	if f == nil {
		return WithCallIDs(nil)
	}
	return WithCallIDs(CallIDFunc(f))
}

// callID is the model's ID for a call of tool with input on ctx, or "".
func (c *config) callID(ctx context.Context, tool, input string) string {
	if c.callIDs == nil {
		return ""
	}
	return c.callIDs.CallID(ctx, tool, input)
}
