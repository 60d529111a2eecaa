package policyfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// File is the policies of a set of tools, read with Parse, Load or LoadFS;
// WrapAll wraps the agent's tools with them. It never changes and is safe
// for concurrent use; the With methods return new Files. The zero File has
// no defaults and no tools. A dependency's breaker, bulkhead and retry
// budget are made once per File, shared by every tool wrapped from it.
type File struct {
	file     string
	version  int
	defaults policySpec
	deps     map[string]*depSpec
	depNames []string // in file order
	tools    map[string]*toolSpec
	names    []string // in file order
	// mcpServers are the MCP servers the file names, by the program's name
	// for them (mcptools.WithServerName).
	mcpServers map[string]*mcpServerSpec
	extra      []toolsafe.Option // from With, after the file's options
	approver   approval.Approver
	// fallbackOpts are the options of WithFallbackOptions, by tool.
	fallbackOpts map[string][]fallback.Option
	stores       map[string]Shared // from WithShared, by kind
	hook         *otelhook.Hook    // from WithTracing; nil: shared.hook
	shared       *sharedDeps
}

// sharedDeps holds the breakers, bulkheads and budgets of the dependencies,
// made on first use and shared by every tool wrapped from the File.
type sharedDeps struct {
	hook *otelhook.Hook // for tracing: true; global providers, looked up at each call

	mu   sync.Mutex
	deps map[string]*depRuntime
}

// Parse reads a File from YAML or JSON; empty data is a File with no
// defaults and no tools. It returns an *Error that lists every problem,
// each with its line; a file past a limit (MaxSize, MaxDepth, MaxEntries)
// gets that one problem only.
func Parse(data []byte) (*File, error) {
	return parse("", data)
}

// Load reads the File at path as Parse does, and the problems of its
// *Error name the file ("policies.yaml:7:5: tools.fetch_invoice.timout:
// ..."). It reads at most MaxSize+1 bytes, so a larger file, or a device
// that never ends, is refused by its size. When the file cannot be read,
// the error wraps the os error.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: %w", err)
	}
	return load(path, f)
}

// LoadFS reads the File called name in fsys as Load does, such as a
// policies file embedded next to the program with //go:embed; its problems
// name the file and its size is limited as Load's are.
func LoadFS(fsys fs.FS, name string) (*File, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: %w", err)
	}
	return load(name, f)
}

// load reads and parses the open file f called name, and closes it.
func load(name string, f io.ReadCloser) (*File, error) {
	defer f.Close()
	data, err := yamlread.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: %w", err)
	}
	return parse(name, data)
}

func parse(file string, data []byte) (*File, error) {
	var ps problems
	c := decodeFile(data, &ps)
	if c != nil {
		c.check(&ps)
	}
	if err := ps.err(file); err != nil {
		return nil, err
	}
	c.file = file
	c.shared = &sharedDeps{hook: otelhook.New()}
	return c, nil
}

// Tools returns the names of the tools the file names, in the order of the
// file.
func (c *File) Tools() []string { return slices.Clone(c.names) }

// Dependencies returns the names of the dependencies the file declares, in
// the order of the file.
func (c *File) Dependencies() []string { return slices.Clone(c.depNames) }

// With returns a File that adds opts to every tool WrapAll wraps, after
// the file's options: toolsafe.WithOnResult adds up, and a logger or
// toolsafe.WithTracing with your own providers replaces the file's. An
// option that sets a guard the file also sets for a tool (a timeout, a
// retry, side effects, an approver, call limits, a schema, ...; see
// toolsafe.Option) is refused: WrapAll reports that tool, as a guard is
// set once. It shares c's breakers, bulkheads and budgets; c does not
// change.
func (c *File) With(opts ...toolsafe.Option) *File {
	d := *c
	d.extra = append(slices.Clip(c.extra), opts...)
	return &d
}

// WithTracing returns a File whose tools with tracing: true are traced by
// h (toolsafe.WithTracing) instead of a Hook on the global providers: one
// with your own providers, or otelhook.WithHostCallSpan for an agent
// framework that starts the call spans itself. Nil keeps the default. It
// shares c's breakers, bulkheads and budgets; c does not change.
func (c *File) WithTracing(h *otelhook.Hook) *File {
	d := *c
	d.hook = h
	return &d
}

// tracingHook is the Hook of the tools with tracing: true.
func (c *File) tracingHook() *otelhook.Hook {
	if c.hook != nil {
		return c.hook
	}
	return c.shared.hook
}

// resolved is the effective policy of one tool: its own fields over the
// defaults.
type resolved struct {
	name        string
	retries     int
	timeout     time.Duration
	deadline    time.Duration
	backoff     policy.Backoff
	tracing     bool
	dependency  string
	sideEffects string
	sideSet     bool // the file sets side_effects for the tool
	approval    string
	fallback    string
	fallbackOn  []middleware.Kind
	argsSchema  *argschema.Schema
	limits      run.Limits
	limited     bool // the file gives the loop guard limits or repeats
}

// resolve returns the effective policy of the tool called name: its entry
// over the defaults, or the defaults alone for a tool not in the file.
func (c *File) resolve(name string) resolved {
	t := c.tools[name]
	if t == nil {
		t = &toolSpec{name: name}
	}
	d := c.defaults
	r := resolved{
		name:     name,
		retries:  t.retries.or(d.retries).v,
		timeout:  t.timeout.or(d.timeout).v,
		deadline: t.deadline.or(d.deadline).v,
		backoff: policy.Backoff{
			Base:       t.base.or(d.base).v,
			Max:        t.max.or(d.max).v,
			Multiplier: t.multiplier.or(d.multiplier).v,
			Jitter:     t.jitter.or(d.jitter).v,
		},
		tracing:     t.tracing.or(d.tracing).v,
		dependency:  t.dependency.v,
		sideEffects: t.sideEffects.v,
		sideSet:     t.sideEffects.set,
		approval:    t.approval.v,
		fallback:    t.fallback.v,
		fallbackOn:  t.fallbackOn.v,
		argsSchema:  t.argsSchema.v,
	}
	identical, perTool, total, repeats := t.identical.or(d.identical), t.perTool.or(d.perTool), t.total.or(d.total), t.repeats.or(d.repeats)
	r.limits = run.Limits{Identical: identical.v, PerTool: perTool.v, Total: total.v, AllowRepeats: repeats.v == repeatsAllow}
	r.limited = identical.set || perTool.set || total.set || repeats.set
	if r.sideEffects == "" {
		r.sideEffects = sideEffectsNone
	}
	if r.approval == "" {
		r.approval = approvalNone
	}
	return r
}
