package einotools

import (
	"context"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe"
)

// Tool is an Eino tool behind toolsafe's layers, itself a tool.InvokableTool
// for a ToolsNode or an agent. It is safe for concurrent use when the tool
// inside is; its configuration never changes after New.
type Tool struct {
	inner  tool.BaseTool
	name   string
	bodyOf func(opts []tool.Option) body
	guard  *toolsafe.Tool
}

var _ tool.InvokableTool = (*Tool)(nil)

// New wraps t with toolsafe's layers and opts (toolsafe.WithRetry,
// WithTimeout, WithApproval, ...). The call ID is Eino's
// (compose.GetToolCallID); Info's parameters are checked as
// toolsafe.WithArgsSchema would, unless an option gives a schema. A
// tool.StreamableTool is read to its end inside each attempt and answers in
// one piece; an enhanced tool is refused (ErrUnsupported), as are a nil
// tool, a *Tool and invalid options (every problem in one error).
func New(ctx context.Context, t tool.BaseTool, opts ...toolsafe.Option) (*Tool, error) {
	a, bodyOf, err := adapt(ctx, t)
	if err != nil {
		return nil, err
	}
	all := append([]toolsafe.Option{toolsafe.WithCallIDs(toolsafe.CallIDFunc(compose.GetToolCallID))}, opts...)
	g, err := toolsafe.New(a, all...)
	if err != nil {
		return nil, err
	}
	return &Tool{inner: t, name: a.name, bodyOf: bodyOf, guard: g}, nil
}

// Info returns the Info of the tool inside, as it gives it.
func (t *Tool) Info(ctx context.Context) (*schema.ToolInfo, error) { return t.inner.Info(ctx) }

// InvokableRun runs the call through toolsafe's layers. It returns the
// answer, or a failure's message for the model, with a nil error (Eino ends
// the run on a tool's error); a call that waits for approval as an Eino
// interrupt whose Info and state are its *Pause; the end of ctx as ctx's
// error. Resumed from the checkpoint, the call continues under its key.
func (t *Tool) InvokableRun(ctx context.Context, argumentsInJSON string, opts ...tool.Option) (string, error) {
	return call(ctx, t.guard, t.name, argumentsInJSON, t.bodyOf(opts))
}
