package adktools

import (
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/tools"
	"google.golang.org/adk/v2/tool"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policyfile"
)

// WrapAll wraps ts with the policies of f, as f.WrapAll wraps langchaingo
// tools, and returns them in order, for llmagent.Config.Tools. The tools
// with tracing: true add to ADK's call span (otelhook.WithHostCallSpan, on
// the global providers, in place of f.WithTracing's Hook). It returns f's
// *policyfile.Error, or an error for a nil or long-running tool.
func WrapAll(f *policyfile.File, ts ...FunctionTool) ([]tool.Tool, error) {
	if f == nil {
		return nil, errors.New("adktools: the policies file is nil")
	}
	inners := make([]tools.Tool, len(ts))
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("adktools: tool %d of %d is nil", i+1, len(ts))
		}
		if t.IsLongRunning() {
			return nil, fmt.Errorf("adktools: tool %q is long-running: toolsafe cannot guard a call whose answer comes later", t.Name())
		}
		in, err := newInner(t)
		if err != nil {
			return nil, err
		}
		inners[i] = in
	}
	f = f.WithTracing(hostHook).With(toolsafe.WithCallIDFunc(CallID))
	safe, err := f.WrapAll(inners...)
	if err != nil {
		return nil, err
	}
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		w, ok := safe[i].(*toolsafe.Tool)
		if !ok {
			return nil, fmt.Errorf("adktools: the policies file wrapped %q as %T, not a *toolsafe.Tool", t.Name(), safe[i])
		}
		out[i] = &Tool{inner: t, safe: w}
	}
	return out, nil
}

// hostHook traces the tools of a policies file under ADK.
var hostHook = otelhook.New(otelhook.WithHostCallSpan())
