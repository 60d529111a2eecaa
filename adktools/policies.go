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

// WrapAll wraps ts, ADK function tools as functiontool.New returns them
// (see FunctionTool), with the policies of f, as f.WrapAll wraps
// langchaingo tools, and returns them in order, for llmagent.Config.Tools.
// The tools with tracing: true add to ADK's call span
// (otelhook.WithHostCallSpan, on the global providers, in place of
// f.WithTracing's Hook). It returns f's *policyfile.Error, or an error for a
// nil, long-running or not function tool (ErrNotFunctionTool).
func WrapAll(f *policyfile.File, ts ...tool.Tool) ([]tool.Tool, error) {
	if f == nil {
		return nil, errors.New("adktools: the policies file is nil")
	}
	fts := make([]FunctionTool, len(ts))
	inners := make([]tools.Tool, len(ts))
	for i, t := range ts {
		if isNil(t) {
			return nil, fmt.Errorf("adktools: tool %d of %d is nil", i+1, len(ts))
		}
		ft, err := functionTool(t)
		if err != nil {
			return nil, err
		}
		in, err := newInner(ft)
		if err != nil {
			return nil, err
		}
		fts[i], inners[i] = ft, in
	}
	f = f.WithTracing(hostHook).With(toolsafe.WithCallIDs(toolsafe.CallIDFunc(CallID)))
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
		out[i] = &Tool{given: t, inner: fts[i], safe: w}
	}
	return out, nil
}

// hostHook traces the tools of a policies file under ADK.
var hostHook = otelhook.New(otelhook.WithHostCallSpan())
