package toolsafe

import (
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/policy"
)

// WrapAll wraps each tool in ts with the policies c gives it (see Config and
// Describe), and returns them in the order of ts, each a *Tool. A tool the
// file does not name gets the defaults. A fallback is wired to the wrapped
// tool of that name among ts, so the alternative runs through its own
// policies. The tools of one dependency share its circuit breaker, bulkhead
// and retry budget, with every other tool wrapped from c.
//
// It returns a *ConfigError listing every problem, and no tools, when a tool
// in ts is nil or two have one name, a tool named in the file is not in ts
// (with its line), or a fallback names a tool not in ts. Safe for
// concurrent use.
func (c *Config) WrapAll(ts ...tools.Tool) ([]tools.Tool, error) {
	var ps problems
	byName := make(map[string]tools.Tool, len(ts))
	var passed []string
	for i, t := range ts {
		if t == nil {
			ps.add(&Problem{Message: fmt.Sprintf("tool %d of the %d passed to WrapAll is nil", i+1, len(ts))})
			continue
		}
		name := t.Name()
		if _, dup := byName[name]; dup {
			ps.add(&Problem{Path: "tools." + name, Tool: name,
				Message: "two tools passed to WrapAll are named " + quoteShort(name) + ": the model calls tools by name, so names must be unique"})
			continue
		}
		byName[name] = t
		passed = append(passed, name)
	}
	for _, name := range c.names {
		t := c.tools[name]
		if byName[name] == nil {
			msg := fmt.Sprintf("%s is named in the file but was not passed to WrapAll: pass it, or remove its entry", quoteShort(name))
			if s := suggest(name, passed); s != "" {
				msg += s
			}
			ps.add(&Problem{Path: "tools." + name, Tool: name, Line: t.at.line, Column: t.at.col, Message: msg})
		}
		if t.fallback.set && t.fallback.v != "" && byName[t.fallback.v] == nil {
			msg := fmt.Sprintf("unknown fallback tool %s: it was not passed to WrapAll; pass it too, or name one of %s",
				quoteShort(t.fallback.v), strings.Join(passed, ", "))
			ps.add(&Problem{Path: "tools." + name + ".fallback.tool", Tool: name, Field: "fallback.tool",
				Line: t.fallback.at.line, Column: t.fallback.at.col, Message: msg + suggest(t.fallback.v, passed)})
		}
		c.unsupported(&ps, name, t)
	}
	if err := ps.err(c.file); err != nil {
		return nil, err
	}

	b := binder{c: c, byName: byName, wrapped: map[string]*Tool{}, busy: map[string]bool{}}
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		w, err := b.wrap(t.Name())
		if err != nil {
			ps.add(&Problem{Path: "tools." + t.Name(), Tool: t.Name(), Message: err.Error()})
			continue
		}
		out[i] = w
	}
	if err := ps.err(c.file); err != nil {
		return nil, err
	}
	return out, nil
}

// binder wraps the tools of one WrapAll call, each once, alternatives
// before the tools that fall back to them.
type binder struct {
	c       *Config
	byName  map[string]tools.Tool
	wrapped map[string]*Tool
	busy    map[string]bool
}

func (b *binder) wrap(name string) (*Tool, error) {
	if w := b.wrapped[name]; w != nil {
		return w, nil
	}
	if b.busy[name] {
		return nil, fmt.Errorf("fallback cycle through %s", name) // ParseConfig rejects cycles
	}
	b.busy[name] = true
	defer delete(b.busy, name)
	opts, err := b.c.options(b, name)
	if err != nil {
		return nil, err
	}
	w, err := New(b.byName[name], opts...)
	if err != nil {
		return nil, err
	}
	b.wrapped[name] = w
	return w, nil
}

// options returns the options of the tool called name: the file's, then
// those given to With.
func (c *Config) options(b *binder, name string) ([]Option, error) {
	r := c.resolve(name)
	var opts []Option
	if r.tracing {
		opts = append(opts, WithTracing(c.shared.hook))
	}
	if r.argsSchema != nil {
		opts = append(opts, WithArgsSchema(r.argsSchema))
	}
	if r.deadline > 0 {
		opts = append(opts, WithDeadline(r.deadline))
	}
	if r.retries > 0 {
		opts = append(opts, WithRetry(policy.Retry{MaxRetries: r.retries, Backoff: r.backoff}))
	}
	if r.timeout > 0 {
		opts = append(opts, WithTimeout(r.timeout))
	}
	return append(opts, c.extra...), nil
}

// unsupported reports the fields this build cannot wire yet.
func (c *Config) unsupported(ps *problems, name string, t *toolSpec) {
	report := func(field string, o pos, what string) {
		ps.add(&Problem{Path: "tools." + name + "." + field, Tool: name, Field: field, Line: o.line, Column: o.col,
			Message: what + " is not supported yet by WrapAll: wrap this tool in code with the toolsafe options instead, or remove the field"})
	}
	if t.dependency.set {
		report("dependency", t.dependency.at, "dependency (circuit breaker, bulkhead, retry budget)")
	}
	if t.fallback.set {
		report("fallback", t.fallback.at, "fallback")
	}
	if t.approval.set && t.approval.v != approvalNone {
		report("approval", t.approval.at, "approval")
	}
	if t.sideEffects.set && t.sideEffects.v != sideEffectsNone {
		report("side_effects", t.sideEffects.at, "side_effects")
	}
}

// depRuntime is the shared state of one dependency: its circuit breaker,
// bulkhead and retry budget.
type depRuntime struct{}
