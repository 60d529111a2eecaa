package toolsafe

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/schema"
)

// CallIDs hands the model's tool-call IDs from langchaingo's executor to
// wrapped tools (for Result.CallID and gen_ai.tool.call.id): give the same
// CallIDs to the executor as its callbacks handler and to the tools with
// WithCallIDs (see ExampleCallIDs). IDs are kept per context, so concurrent
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

var _ callbacks.Handler = (*CallIDs)(nil)

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

// take returns, and forgets, the ID announced on ctx for a call to tool with
// input; "" if none. A nil *CallIDs answers "".
func (c *CallIDs) take(ctx context.Context, tool, input string) string {
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

// WithCallIDs makes the tool take the model's tool-call ID from ids (see
// CallIDs), for Result.CallID, the call record (middleware.CallID) and the
// span attribute gen_ai.tool.call.id. Nil means none: every call gets a
// random ID.
// A later WithCallIDs replaces an earlier one.
func WithCallIDs(ids *CallIDs) Option {
	return optionFunc(func(c *config) { c.callIDs = ids })
}

// WithCallIDFunc makes the tool take the model's tool-call ID from the
// context of each call through f, for hosts that carry it there (Eino's
// compose.GetToolCallID, ADK's agent.Context.FunctionCallID): for
// Result.CallID, middleware.CallID and gen_ai.tool.call.id. An ID f gives
// wins over one from WithCallIDs; "" from f, or a nil f, leaves the call to
// WithCallIDs or a made-up ID.
// A later WithCallIDFunc replaces an earlier one.
func WithCallIDFunc(f func(ctx context.Context) string) Option {
	return optionFunc(func(c *config) { c.callIDFunc = f })
}

// callID is the model's ID for a call of tool with input on ctx, or "".
func (c *config) callID(ctx context.Context, tool, input string) string {
	if c.callIDFunc != nil {
		if id := c.callIDFunc(ctx); id != "" {
			c.callIDs.take(ctx, tool, input) // forget what the executor announced for it
			return id
		}
	}
	return c.callIDs.take(ctx, tool, input)
}
