package einotools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// ErrUnsupported is in the error New and Middleware return for a tool whose
// results toolsafe cannot guard: an enhanced tool (tool.EnhancedInvokableTool,
// tool.EnhancedStreamableTool), whose multimodal results are not text.
var ErrUnsupported = errors.New("einotools: the tool's results cannot be guarded")

// body runs an Eino tool once on its JSON arguments.
type body func(ctx context.Context, args string) (string, error)

// invocation is one call of an Eino tool: the body that runs it (with the
// call's tool options, or the ToolsNode's next endpoint), and an interrupt
// the tool raised of its own.
type invocation struct {
	tool string
	run  body

	mu        sync.Mutex
	interrupt error
}

type invocationKey struct{}

func (inv *invocation) keep(err error) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.interrupt == nil {
		inv.interrupt = err
	}
}

func (inv *invocation) interrupted() error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.interrupt
}

// adapter is an Eino tool as the langchaingo tool toolsafe's layers wrap.
// Its Call runs the body of the invocation on its context when that is a
// call of this tool, and the tool itself otherwise (as a fallback's
// alternative is run).
type adapter struct {
	name, description string
	schema            json.RawMessage
	direct            body
}

var (
	_ tools.Tool        = (*adapter)(nil)
	_ argschema.Schemer = (*adapter)(nil)
)

func (a *adapter) Name() string                { return a.name }
func (a *adapter) Description() string         { return a.description }
func (a *adapter) ArgsSchema() json.RawMessage { return a.schema }

func (a *adapter) Call(ctx context.Context, input string) (string, error) {
	run := a.direct
	inv, _ := ctx.Value(invocationKey{}).(*invocation)
	if inv != nil && inv.tool == a.name {
		run = inv.run
	}
	out, err := run(ctx, input)
	if _, isInterrupt := compose.IsInterruptRerunError(err); isInterrupt && inv != nil {
		// For toolsafe's layers the call pauses, as for an approval: it is
		// not retried, not a failure, and the loop guard lets its resumed
		// run through. Eino gets the tool's own interrupt once the call ends.
		inv.keep(err)
		return "", &approval.Required{Tool: a.name, CallID: middleware.CallID(ctx),
			Input: input, Reason: "the tool interrupted the run itself", Err: err}
	}
	return out, err
}

// adapt reads t's Info and returns it as an adapter whose direct body runs
// t with opts. It refuses a nil tool, a Tool of this package (guarded
// already), an enhanced tool and a tool that cannot be run.
func adapt(ctx context.Context, t tool.BaseTool) (*adapter, func(opts []tool.Option) body, error) {
	if t == nil || (reflect.ValueOf(t).Kind() == reflect.Pointer && reflect.ValueOf(t).IsNil()) {
		return nil, nil, errors.New("einotools: the tool is nil")
	}
	if _, ok := t.(*Tool); ok {
		return nil, nil, errors.New("einotools: the tool is guarded already (an *einotools.Tool): wrap the tool inside it once, with all its options")
	}
	info, err := t.Info(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("einotools: the tool's Info: %w", err)
	}
	if info == nil || info.Name == "" {
		return nil, nil, fmt.Errorf("einotools: the tool %T has no name in its Info", t)
	}
	bodyOf, err := bodyOf(t, info.Name)
	if err != nil {
		return nil, nil, err
	}
	a := &adapter{name: info.Name, description: info.Desc, direct: bodyOf(nil)}
	if info.ParamsOneOf != nil {
		js, err := info.ParamsOneOf.ToJSONSchema()
		if err == nil && js != nil {
			a.schema, err = json.Marshal(js)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("einotools: tool %q: its parameters as a JSON schema: %w", info.Name, err)
		}
	}
	return a, bodyOf, nil
}

// bodyOf returns how t is run with a call's options: InvokableRun, or
// StreamableRun read to its end within the attempt.
func bodyOf(t tool.BaseTool, name string) (func(opts []tool.Option) body, error) {
	switch v := t.(type) {
	case tool.InvokableTool:
		return func(opts []tool.Option) body {
			return func(ctx context.Context, args string) (string, error) { return v.InvokableRun(ctx, args, opts...) }
		}, nil
	case tool.StreamableTool:
		return func(opts []tool.Option) body {
			return func(ctx context.Context, args string) (string, error) {
				sr, err := v.StreamableRun(ctx, args, opts...)
				if err != nil {
					return "", err
				}
				return readAll(sr)
			}
		}, nil
	case tool.EnhancedInvokableTool, tool.EnhancedStreamableTool:
		return nil, fmt.Errorf("%w: tool %q is an enhanced tool (multimodal results); "+
			"toolsafe guards tools whose result is text: give it a tool.InvokableTool", ErrUnsupported, name)
	}
	return nil, fmt.Errorf("einotools: tool %q (%T) is neither a tool.InvokableTool nor a tool.StreamableTool", name, t)
}

// readAll reads a tool's stream to its end and closes it.
func readAll(sr *schema.StreamReader[string]) (string, error) {
	if sr == nil {
		return "", nil
	}
	defer sr.Close()
	var b strings.Builder
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		b.WriteString(chunk)
	}
}

// call runs one call of the tool name through ts, the Eino tool's body
// being run: the answer, or a failure's message for the model, with a nil
// error; an approval pause as an Eino interrupt carrying a *Pause; the
// caller's cancellation as ctx's error. A call that resumes a paused one
// (Eino hands the tool its saved *Pause) continues it under its
// idempotency key and in its run (run.Resume); the approver decides again.
func call(ctx context.Context, ts *toolsafe.Tool, name, args string, run body) (string, error) {
	inv := &invocation{tool: name, run: run}
	ctx = context.WithValue(ctx, invocationKey{}, inv)
	if was, ok, p := tool.GetInterruptState[*Pause](ctx); was && ok && p != nil {
		ctx = resume(ctx, p)
	}
	out, err := ts.Call(ctx, args)
	if ierr := inv.interrupted(); ierr != nil {
		return "", ierr
	}
	var ar *approval.Required
	if errors.As(err, &ar) {
		p := pauseOf(ar)
		return "", tool.StatefulInterrupt(ctx, p, p)
	}
	return out, err
}

// resume is run.Resume for the paused call p.
func resume(ctx context.Context, p *Pause) context.Context {
	return run.Resume(ctx, p.Required())
}
