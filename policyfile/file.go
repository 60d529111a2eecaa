package policyfile

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// Config is the policies of a set of tools, read from one reviewed YAML file
// (JSON is YAML too) with Load or Parse: which tool gets which
// retries, timeouts, circuit breaker, bulkhead, fallback, approval and
// argument schema. Config.WrapAll wraps the agent's tools with them.
//
// A Config never changes after it is parsed and is safe for concurrent use.
// The zero Config is an empty file: no defaults, no tools.
// The circuit breaker, bulkhead and retry budget of a dependency are made
// once per Config (and the Configs that With derives from it), so every tool
// wrapped from it that names the dependency shares them, whatever the number
// of WrapAll calls.
//
// # The file
//
// Every field is optional. Durations are Go duration strings ("500ms",
// "2s", "1m30s"; a bare 0 is allowed); a number without a unit is an error.
// A field left out takes the value from defaults, and a default left out
// means "none": no retry, no time limit, no breaker.
//
//	version: 1                 # the format of this file; 1, the only one so far
//
//	defaults:                  # every tool, unless its own entry says otherwise
//	  retries: 2               # retries after the first attempt: 2 means up to 3 attempts; 0: none
//	  timeout: 10s             # limit of each attempt, held even if the tool ignores its context; 0: none
//	  deadline: 30s            # limit of the whole call, attempts and waits included; 0: none
//	  backoff:                 # the wait before each retry: min(max, base × multiplier^(n−1)) × (1 + up to jitter)
//	    base: 500ms            # the wait after the first failed attempt; 0: no wait
//	    max: 30s               # cap of a wait before jitter (a wait can reach max × (1+jitter)); 0: no cap
//	    multiplier: 2          # growth from one wait to the next; 0 or 1: constant
//	    jitter: 0.25           # in [0, 1]: the largest fraction added at random (0.25: 1s becomes 1s..1.25s)
//	  tracing: false           # true: spans and metrics per call and attempt (otelhook, global OTel providers)
//
//	dependencies:              # upstream services; the tools of one share its breaker, bulkhead and budget
//	  billing:
//	    breaker:               # circuit breaker; left out: none; {} gives the values that 0 means
//	      failures: 5          # failed attempts (transient or timed out) that open it ...; 0: 5
//	      window: 10           # ... among the last `window` attempts; 0: failures (that many in a row)
//	      delay: 30s           # how long it stays open before letting probes through; 0: 30s
//	      probes: 1            # attempts let through while half-open; all must succeed to close it; 0: 1
//	    concurrency: 8         # bulkhead: attempts in flight at once, over all its tools; 0: no bulkhead
//	    max_wait: 1s           # how long an attempt waits for a free slot before tool-busy; 0: not at all
//	    retry_budget: 0.2      # in [0, 1]: most share of in-flight attempts that may be retries (3 always may); 0: none
//
//	tools:                     # by the tool's Name(); a tool not named here gets the defaults
//	  fetch_invoice:
//	    dependency: billing    # a name under dependencies
//	    retries: 3             # as in defaults; so are timeout, deadline, backoff (field by field) and tracing
//	    timeout: 2s
//	  refund:
//	    dependency: billing
//	    side_effects: idempotent   # none (the default): safe to repeat; idempotent: it sends the call's
//	                               # idempotency key, so retries are safe; not_idempotent: no retry after
//	                               # an attempt that may have landed (timeout, reset); the model is told to check
//	    approval: every_attempt    # none (the default); per_call: one grant per call;
//	                               # every_attempt: each attempt, retries included, needs its own grant
//	  search:
//	    fallback:                  # or just `fallback: archive_search`
//	      tool: archive_search     # another tool passed to WrapAll, wrapped by its own policies
//	      on: [tool-failed, circuit-open]  # the failure kinds that route to it; left out: tool-failed,
//	                                       # tool-timeout, circuit-open and tool-error
//	    args_schema:               # JSON Schema of the tool's input, a JSON object; see package argschema
//	      type: object
//	      required: [query]
//	      properties: {query: {type: string, minLength: 1}}
//
// Anchors, aliases and merge keys (<<: *billing_tool) work as YAML defines
// them; top-level fields whose names begin with "x-" are ignored, a place to
// define anchors:
//
//	x-billing: &billing_tool {dependency: billing, retries: 3, timeout: 2s}
//	tools:
//	  fetch_invoice: *billing_tool
//	  list_invoices: {<<: *billing_tool, timeout: 5s}
//
// Every other unknown field is an error, so a typo like "timout" is caught.
//
// # Checks
//
// Parse reports, all in one pass and each with its line and column:
// unknown fields (with the field meant, when the typo is close), values of
// the wrong type, negative counts and durations, a jitter or retry budget
// outside [0, 1], a backoff max shorter than its base, an attempt timeout
// longer than the deadline, a breaker window smaller than its failures, a
// max_wait without concurrency, an unknown dependency, an unknown failure kind or
// one that never falls back (approval-required, approval-denied,
// args-invalid, canceled), a fallback cycle (a → b → a), and an args_schema
// that is not a valid JSON Schema. WrapAll adds the problems of binding the
// file to tools: a tool named in the file but not passed, a fallback to a
// tool not passed, a tool passed twice, an approval with no approver.
//
// # What comes from code
//
// The file says which tool needs approval; the Approver that decides comes
// from code, with WithApprover. So does a fallback's input adapter
// (WithFallbackOptions with fallback.WithInput), and any option for every
// tool, such as a logger or a tracer of your own (With):
//
//	cfg, err := toolsafe.Load("policies.yaml")
//	if err != nil {
//		log.Fatal(err) // every problem, with its line
//	}
//	agentTools, err := cfg.WithApprover(grants).WrapAll(fetchInvoice, refund, search, archiveSearch)
type File struct {
	file     string
	version  int
	defaults policySpec
	deps     map[string]*depSpec
	depNames []string // in file order
	tools    map[string]*toolSpec
	names    []string          // in file order
	extra    []toolsafe.Option // from With, after the file's options
	approver middleware.Approver
	// fallbackOpts are the options of WithFallbackOptions, by tool.
	fallbackOpts map[string][]fallback.Option
	shared       *sharedDeps
}

// sharedDeps holds the breakers, bulkheads and budgets of the dependencies,
// made on first use and shared by every tool wrapped from the Config.
type sharedDeps struct {
	hook *otelhook.Hook // for tracing: true; global providers, looked up at each call

	mu   sync.Mutex
	deps map[string]*depRuntime
}

// Parse reads a Config from YAML or JSON. It returns a *Error
// that lists every problem, each with its line, when data is not a valid
// policies file (see Config for the format and the checks). Empty data is a
// valid Config with no defaults and no tools.
func Parse(data []byte) (*File, error) {
	return parseConfig("", data)
}

// Load reads the Config in the file at path (see Parse). The
// problems of a *Error name the file, as in
// "policies.yaml:7:5: tools.fetch_invoice.timout: unknown field".
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: %w", err)
	}
	return parseConfig(path, data)
}

// LoadFS reads the Config in the file called name in fsys (see
// Parse), such as a policies file embedded next to the program:
//
//	//go:embed policies.yaml
//	var policyFiles embed.FS
//
//	cfg, err := toolsafe.LoadFS(policyFiles, "policies.yaml")
//
// The problems of a *Error name the file, as Load's do.
func LoadFS(fsys fs.FS, name string) (*File, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("toolsafe: %w", err)
	}
	return parseConfig(name, data)
}

func parseConfig(file string, data []byte) (*File, error) {
	var ps problems
	c := decodeConfig(data, &ps)
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

// With returns a Config that adds opts to the options of every tool WrapAll
// wraps, after the file's, so that they win where an option replaces
// another: for a logger (WithLogger), a hook on results (WithOnResult),
// tracing with your own providers (WithTracing) or your own middlewares
// (With). The Config it returns shares c's breakers, bulkheads and budgets.
// c itself does not change.
func (c *File) With(opts ...toolsafe.Option) *File {
	d := *c
	d.extra = append(slices.Clip(c.extra), opts...)
	return &d
}

// pos is a place in the file, 1-based; the zero pos is no place.
type pos struct{ line, col int }

// opt is a field that may be left out, with where it was set.
type opt[T any] struct {
	v   T
	set bool
	at  pos
}

func (o opt[T]) or(def opt[T]) opt[T] {
	if o.set {
		return o
	}
	return def
}

// policySpec is what both defaults and a tool may set.
type policySpec struct {
	retries    opt[int]
	timeout    opt[time.Duration]
	deadline   opt[time.Duration]
	base, max  opt[time.Duration]
	multiplier opt[float64]
	jitter     opt[float64]
	tracing    opt[bool]
}

// toolSpec is one entry under tools.
type toolSpec struct {
	name string
	at   pos
	policySpec
	dependency  opt[string]
	sideEffects opt[string]
	approval    opt[string]
	fallback    opt[string] // the alternative tool
	fallbackOn  opt[[]middleware.Kind]
	argsSchema  opt[*argschema.Schema] // compiled once, when the file is read
}

// depSpec is one entry under dependencies.
type depSpec struct {
	name        string
	at          pos
	breaker     opt[bool] // whether a breaker was given; at is its place
	failures    opt[int]
	window      opt[int]
	delay       opt[time.Duration]
	probes      opt[int]
	concurrency opt[int]
	maxWait     opt[time.Duration]
	retryBudget opt[float64]
}

// The values of side_effects and approval.
const (
	sideEffectsNone       = "none"
	sideEffectsIdempotent = "idempotent"
	sideEffectsNot        = "not_idempotent"

	approvalNone         = "none"
	approvalPerCall      = "per_call"
	approvalEveryAttempt = "every_attempt"
)

// resolved is the effective policy of one tool: its own fields over the
// defaults.
type resolved struct {
	name        string
	inFile      bool
	retries     int
	timeout     time.Duration
	deadline    time.Duration
	backoff     policy.Backoff
	tracing     bool
	dependency  string
	sideEffects string
	approval    string
	fallback    string
	fallbackOn  []middleware.Kind
	argsSchema  *argschema.Schema
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
		inFile:   c.tools[name] != nil,
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
		approval:    t.approval.v,
		fallback:    t.fallback.v,
		fallbackOn:  t.fallbackOn.v,
		argsSchema:  t.argsSchema.v,
	}
	if r.sideEffects == "" {
		r.sideEffects = sideEffectsNone
	}
	if r.approval == "" {
		r.approval = approvalNone
	}
	return r
}
