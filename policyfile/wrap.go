package policyfile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// WrapAll wraps each tool in ts with the policies c gives it (see Describe;
// a tool the file does not name gets the defaults) and returns them in the
// order of ts as toolsafe.Tools. The tools of one dependency share its
// breaker, bulkhead and retry budget; a fallback is wired to the wrapped
// alternative of that name. It returns an *Error listing every problem, and
// no tools, for a nil or already wrapped tool, names that collide, a tool
// the file names that is not in ts, approval without an approver, or a
// shared dependency without its store. Safe for concurrent use.
func (c *File) WrapAll(ts ...tools.Tool) (toolsafe.Tools, error) {
	var ps problems
	nils := addListProblems(&ps, ts)
	addWrappedProblems(&ps, ts)
	byName := make(map[string]tools.Tool, len(ts))
	var passed []string
	for i, t := range ts {
		if slices.Contains(nils, i) {
			continue
		}
		if _, dup := byName[t.Name()]; !dup {
			byName[t.Name()] = t
			passed = append(passed, t.Name())
		}
	}
	c.bindProblems(&ps, passed, passedToWrapAll)
	for _, name := range c.names {
		t := c.tools[name]
		if t.approval.set && t.approval.v != approvalNone && c.approver == nil {
			ps.add(&Problem{Path: "tools." + name + ".approval", Tool: name, Field: "approval",
				Line: t.approval.at.Line, Column: t.approval.at.Col,
				Message: fmt.Sprintf("approval %s needs an approver: call WithApprover on the File before WrapAll, such as file.WithApprover(approval.NewGrants())", t.approval.v)})
		}
	}
	c.sharedProblems(&ps)
	for _, name := range slices.Sorted(maps.Keys(c.fallbackOpts)) {
		if t := c.tools[name]; t == nil || !t.fallback.set {
			ps.add(&Problem{Tool: name,
				Message: fmt.Sprintf("WithFallbackOptions names %s, but the file gives it no fallback: add one under tools.%s, or drop the options", yamlread.QuoteShort(name), name)})
		}
	}
	if err := ps.err(c.file); err != nil {
		return nil, err
	}

	b := binder{c: c, byName: byName, wrapped: map[string]*toolsafe.Tool{}, busy: map[string]bool{}}
	out := make(toolsafe.Tools, len(ts))
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

// CheckTools reports the problems of binding c to an agent whose tools
// have the given names, as WrapAll would report them, without wrapping
// anything: names that collide (toolsafe.NamesCollide), a tool named in the
// file that is not among names (with its line), a fallback to a tool not
// among them. It returns an *Error, or nil. What only code settles is not
// checked: the approver of the tools that need approval, and the tools
// WithFallbackOptions names. This is the check of `toolsafe check -tools`,
// so its problems speak of "the agent's tools given", not of WrapAll.
func (c *File) CheckTools(names ...string) error {
	var ps problems
	var le *toolsafe.ToolListError
	if errors.As(toolsafe.CheckNames(names...), &le) {
		addCollisions(&ps, le.Collisions, givenByName)
	}
	seen := make(map[string]bool, len(names))
	var passed []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			passed = append(passed, n)
		}
	}
	c.bindProblems(&ps, passed, givenByName)
	return ps.err(c.file)
}

// toolSource says, in a problem, where the tools bound to a file came
// from: passed to WrapAll by a program, or named to CheckTools, as a person
// at a terminal does with toolsafe check -tools, who never called WrapAll.
type toolSource struct {
	notIn string // "X is named in the file but ..."
	fix   string // "...: FIX, or remove its entry"
	alt   string // "unknown fallback tool X: ALT; ..."
	addIt string // "...; ADDIT, or name one of ..."
	two   string // "TWO are named X and Y"
}

var (
	passedToWrapAll = toolSource{notIn: "was not passed to WrapAll", fix: "pass it", alt: "it was not passed to WrapAll",
		addIt: "pass it too", two: "two tools passed to WrapAll"}
	givenByName = toolSource{notIn: "is not one of the agent's tools given (%s)", fix: "add it to them", alt: "it is not one of the agent's tools given",
		addIt: "add it to them", two: "two of the agent's tools given"}
)

// bindProblems adds the problems of binding c to the tools called passed
// (distinct names, in the order given), which came from src.
func (c *File) bindProblems(ps *problems, passed []string, src toolSource) {
	notIn := src.notIn
	if strings.Contains(notIn, "%s") {
		notIn = fmt.Sprintf(notIn, nameList(passed))
	}
	has := make(map[string]bool, len(passed))
	for _, n := range passed {
		has[n] = true
	}
	for _, name := range c.names {
		t := c.tools[name]
		if !has[name] {
			msg := fmt.Sprintf("%s is named in the file but %s: %s, or remove its entry", yamlread.QuoteShort(name), notIn, src.fix)
			if s := ps.suggestName(name, passed); s != "" {
				msg += s
			}
			ps.add(&Problem{Path: "tools." + name, Tool: name, Line: t.at.Line, Column: t.at.Col, Message: msg})
		}
		if t.fallback.set && t.fallback.v != "" && !has[t.fallback.v] {
			msg := fmt.Sprintf("unknown fallback tool %s: %s; %s, or name one of %s",
				yamlread.QuoteShort(t.fallback.v), src.alt, src.addIt, nameList(passed))
			ps.add(&Problem{Path: "tools." + name + ".fallback.tool", Tool: name, Field: "fallback.tool",
				Line: t.fallback.at.Line, Column: t.fallback.at.Col, Message: msg + ps.suggestName(t.fallback.v, passed)})
		}
	}
}

// addListProblems adds a problem for each nil tool in ts and each tool
// whose name collides with an earlier one's (toolsafe.Tools.Check), and
// returns the positions of the nil tools.
func addListProblems(ps *problems, ts []tools.Tool) []int {
	var le *toolsafe.ToolListError
	if !errors.As(toolsafe.Tools(ts).Check(), &le) {
		return nil
	}
	for _, i := range le.Nil {
		ps.add(&Problem{Message: fmt.Sprintf("tool %d of the %d passed to WrapAll is nil", i+1, len(ts))})
	}
	addCollisions(ps, le.Collisions, passedToWrapAll)
	return le.Nil
}

// addWrappedProblems adds a problem for each tool of ts that is a
// *toolsafe.Tool already (see toolsafe.ErrWrapped).
func addWrappedProblems(ps *problems, ts []tools.Tool) {
	for i, t := range ts {
		if w, ok := t.(*toolsafe.Tool); ok && w != nil {
			ps.add(&Problem{Path: "tools." + w.Name(), Tool: w.Name(),
				Message: fmt.Sprintf("tool %d of the %d passed to WrapAll, %s, is a *toolsafe.Tool already: pass the tool it wraps, unwrapped; wrapping it again would ask its approver twice per call and take the inner layers' failures for answers",
					i+1, len(ts), yamlread.QuoteShort(w.Name()))})
		}
	}
}

// addCollisions adds a problem for each pair of tool names from src that
// collide.
func addCollisions(ps *problems, cs []toolsafe.NameCollision, src toolSource) {
	for _, c := range cs {
		if c.FirstName == c.SecondName {
			ps.add(&Problem{Path: "tools." + c.SecondName, Tool: c.SecondName,
				Message: src.two + " are named " + yamlread.QuoteShort(c.SecondName) + ": the model calls tools by name, so names must be unique"})
			continue
		}
		ps.add(&Problem{Path: "tools." + c.SecondName, Tool: c.SecondName,
			Message: fmt.Sprintf("%s are named %s and %s: langchaingo's executor looks tools up by their upper-cased name, so the later would answer the model's calls to both, whatever policies the other has; rename one",
				src.two, yamlread.QuoteShort(c.FirstName), yamlread.QuoteShort(c.SecondName))})
	}
}

// binder wraps the tools of one WrapAll call, each once, alternatives
// before the tools that fall back to them.
type binder struct {
	c       *File
	byName  map[string]tools.Tool
	wrapped map[string]*toolsafe.Tool
	busy    map[string]bool
}

func (b *binder) wrap(name string) (*toolsafe.Tool, error) {
	if w := b.wrapped[name]; w != nil {
		return w, nil
	}
	if b.busy[name] {
		return nil, fmt.Errorf("fallback cycle through %s", name) // Parse refuses cycles
	}
	b.busy[name] = true
	defer delete(b.busy, name)
	opts, err := b.c.options(b, name)
	if err != nil {
		return nil, err
	}
	w, err := toolsafe.New(b.byName[name], opts...)
	if err != nil {
		return nil, b.c.withConflict(b.byName[name], opts, err)
	}
	b.wrapped[name] = w
	return w, nil
}

// withConflict is err, the error of toolsafe.New for t with opts, saying
// so when the file's options (the start of opts) and those given to With
// (the end) are each valid for t but not together: they set one guard
// twice, which toolsafe.New refuses, so that no option given to With
// silently replaces what the file says (a timeout, the side effects, the
// approver).
func (c *File) withConflict(t tools.Tool, opts []toolsafe.Option, err error) error {
	n := len(c.extra)
	if n == 0 || !errors.Is(err, toolsafe.ErrConfig) {
		return err
	}
	if _, ferr := toolsafe.New(t, opts[:len(opts)-n]...); ferr != nil {
		return err
	}
	if _, werr := toolsafe.New(t, c.extra...); werr != nil {
		return err
	}
	return fmt.Errorf("%w (the file's policies for it and the options given to File.With are each valid, but File.With sets again what the file sets: drop the option from File.With, or the field from the file)", err)
}

// options returns the options of the tool called name: the file's, then
// those given to With.
func (c *File) options(b *binder, name string) ([]toolsafe.Option, error) {
	r := c.resolve(name)
	var opts []toolsafe.Option
	if r.tracing {
		opts = append(opts, toolsafe.WithTracing(c.tracingHook()))
	}
	if r.limited {
		opts = append(opts, toolsafe.WithCallLimits(r.limits))
	}
	if r.argsSchema != nil {
		opts = append(opts, toolsafe.WithArgs(r.argsSchema))
	}
	if r.deadline > 0 {
		opts = append(opts, toolsafe.WithDeadline(r.deadline))
	}
	var rt *depRuntime
	if r.dependency != "" {
		var err error
		if rt, err = c.dependency(r.dependency); err != nil {
			return nil, err
		}
	}
	if r.retries > 0 {
		retry := policy.Retry{MaxRetries: r.retries, Backoff: r.backoff}
		if rt != nil {
			retry.Shared, retry.Budget = rt.sharedBudget, rt.budget
		}
		opts = append(opts, toolsafe.WithRetry(retry))
	}
	if r.timeout > 0 {
		opts = append(opts, toolsafe.WithTimeout(r.timeout))
	}
	if rt != nil {
		if rt.breaker != nil {
			opts = append(opts, toolsafe.WithCircuitBreaker(rt.breaker))
		}
		if rt.bulkhead != nil {
			opts = append(opts, toolsafe.WithBulkhead(rt.bulkhead))
		}
	}
	switch r.sideEffects {
	case sideEffectsIdempotent:
		opts = append(opts, toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	case sideEffectsNot:
		opts = append(opts, toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
	}
	if h, ok := b.byName[name].(middleware.HintedTool); ok && r.approval != approvalEveryAttempt {
		// A tool with hints (an MCP server's): toolsafe.New takes its side
		// effects from them, unless the file says side_effects: none, or
		// trusts the server where the program did not.
		s, from := c.hintedSideEffects(r, h.Hints())
		if r.sideSet && r.sideEffects == sideEffectsNone || from == middleware.FromTrustedHint && !h.Hints().Trusted {
			opts = append(opts, toolsafe.WithSideEffects(s))
		}
	}
	switch r.approval {
	case approvalPerCall:
		opts = append(opts, toolsafe.WithApproval(c.approver))
	case approvalEveryAttempt:
		opts = append(opts, toolsafe.WithApproval(c.approver, approval.ApproveEachAttempt))
	}
	if r.fallback != "" {
		alt, err := b.wrap(r.fallback)
		if err != nil {
			return nil, fmt.Errorf("its fallback %s: %w", r.fallback, err)
		}
		var fopts []fallback.Option
		if r.fallbackOn != nil {
			fopts = append(fopts, fallback.On(r.fallbackOn...))
		}
		fopts = append(fopts, c.fallbackOpts[name]...)
		opts = append(opts, toolsafe.WithFallback(fallback.To(alt, fopts...)))
	}
	return append(opts, c.extra...), nil
}

// WithApprover returns a File whose WrapAll gives a to the tools whose
// approval field is per_call or every_attempt (see toolsafe.WithApproval
// with approval.ApproveCall or approval.ApproveEachAttempt): the approval gate asks it before they run.
// WrapAll reports such a tool when no approver was given; a nil a removes
// the approver. The File it returns shares c's breakers, bulkheads and
// budgets; c itself does not change.
func (c *File) WithApprover(a approval.Approver) *File {
	d := *c
	d.approver = a
	return &d
}

// WithFallbackOptions returns a File whose WrapAll adds opts to the
// fallback of the tool called tool, after the file's "on", as when the
// alternative takes other arguments (fallback.WithInput). Several calls for
// one tool add up. WrapAll reports a tool that has no fallback in the file.
// The File it returns shares c's breakers, bulkheads and budgets; c itself
// does not change.
func (c *File) WithFallbackOptions(tool string, opts ...fallback.Option) *File {
	d := *c
	d.fallbackOpts = maps.Clone(c.fallbackOpts)
	if d.fallbackOpts == nil {
		d.fallbackOpts = map[string][]fallback.Option{}
	}
	d.fallbackOpts[tool] = append(slices.Clip(c.fallbackOpts[tool]), opts...)
	return &d
}

// depRuntime is the shared state of one dependency: its circuit breaker,
// bulkhead and retry budget (in this process, or shared by the fleet),
// each nil when the file gives it none.
type depRuntime struct {
	breaker      *policy.CircuitBreaker
	bulkhead     *policy.Bulkhead
	budget       budget.Budget
	sharedBudget policy.SharedBudget
}

// dependency returns the shared state of the dependency called name, made
// on first use: its breaker and retry budget by the store of its shared
// kind (WithShared) when it has one.
func (c *File) dependency(name string) (*depRuntime, error) {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if rt := c.shared.deps[name]; rt != nil {
		return rt, nil
	}
	d := c.deps[name]
	rt := &depRuntime{}
	var store Shared
	if d.isShared() {
		store = c.stores[d.shared.v] // WrapAll refused a shared dependency with no store
	}
	if d.breaker != nil {
		if store != nil {
			cb, err := store.CircuitBreaker(name, *d.breaker)
			if err != nil {
				return nil, fmt.Errorf("dependency %s: its shared breaker: %w", name, err)
			}
			rt.breaker = cb
		} else {
			rt.breaker = policy.NewCircuitBreaker(name, *d.breaker)
		}
	}
	if d.concurrency.v > 0 {
		rt.bulkhead = policy.NewBulkhead(name, uint(d.concurrency.v), d.maxWait.v)
	}
	if d.retryBudget.v > 0 {
		if store != nil {
			b, err := store.RetryBudget(name, d.retryBudget.v)
			if err != nil {
				return nil, fmt.Errorf("dependency %s: its shared retry budget: %w", name, err)
			}
			rt.sharedBudget = b
		} else {
			rt.budget = budget.NewBuilder().WithMaxRate(d.retryBudget.v).Build()
		}
	}
	if c.shared.deps == nil {
		c.shared.deps = map[string]*depRuntime{}
	}
	c.shared.deps[name] = rt
	return rt, nil
}
