package policyfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolsafe/toolsafe/policyfile"
)

// issueExample is the policies file of issue 5, as written there.
const issueExample = `
defaults:   {retries: 2, timeout: 10s, deadline: 30s,
             backoff: {base: 500ms, max: 30s, multiplier: 2, jitter: 0.25}}
dependencies:
  billing:  {breaker: {failures: 5, window: 10, delay: 30s, probes: 1},
             concurrency: 8, max_wait: 1s, retry_budget: 0.2}
tools:
  fetch_invoice: {dependency: billing, retries: 3, timeout: 2s}
  refund:        {dependency: billing, side_effects: idempotent, approval: every_attempt}
  search:        {fallback: {tool: archive_search, on: [tool-failed, circuit-open]},
                  args_schema: {type: object, required: [query], properties: {query: {type: string}}}}
`

func TestValidConfigsDescribeEachToolsChain(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		chains map[string]string // tool → Describe
	}{
		{
			name: "the example of the issue",
			yaml: issueExample,
			chains: map[string]string{
				"fetch_invoice":  "surface → deadline 30s → retry 3 (500ms..30s ×2 +25%; budget billing 20%) → breaker billing → bulkhead billing(8, wait 1s) → timeout 2s → tool fetch_invoice",
				"refund":         "surface → deadline 30s → retry 2 (500ms..30s ×2 +25%; budget billing 20%; same idempotency key) → approval every attempt → breaker billing → bulkhead billing(8, wait 1s) → timeout 10s → tool refund",
				"search":         "surface → args schema → fallback(archive_search on tool-failed, circuit-open) → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search",
				"archive_search": "surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool archive_search",
			},
		},
		{
			name: "every layer at once comes in the order the stack runs them, outermost first",
			yaml: `
dependencies:
  billing: {breaker: {}, concurrency: 4, retry_budget: 0.1}
tools:
  refund:
    tracing: true
    args_schema: {type: object}
    fallback: {tool: manual_refund, on: [circuit-open]}
    deadline: 20s
    retries: 2
    backoff: {base: 100ms}
    side_effects: idempotent
    approval: per_call
    dependency: billing
    timeout: 5s
`,
			chains: map[string]string{
				"refund": "trace → surface → args schema → fallback(manual_refund on circuit-open) → deadline 20s → retry 2 (100ms each; budget billing 10%; same idempotency key) → approval per call → breaker billing → bulkhead billing(4) → timeout 5s → tool refund",
			},
		},
		{
			name:   "an empty file gives every tool a bare surface",
			yaml:   "",
			chains: map[string]string{"anything": "surface → tool anything"},
		},
		{
			name:   "a file of comments only is empty",
			yaml:   "# nothing yet\n",
			chains: map[string]string{"anything": "surface → tool anything"},
		},
		{
			name: "a tool's backoff overrides the defaults field by field",
			yaml: `
defaults: {retries: 1, backoff: {base: 1s, max: 8s, multiplier: 2, jitter: 0.1}}
tools:
  quick: {backoff: {base: 100ms}}
`,
			chains: map[string]string{
				"quick": "surface → retry 1 (100ms..8s ×2 +10%) → tool quick",
				"other": "surface → retry 1 (1s..8s ×2 +10%) → tool other",
			},
		},
		{
			name: "zero retries and zero limits switch the defaults off for one tool",
			yaml: `
defaults: {retries: 2, timeout: 10s, deadline: 30s}
tools:
  once: {retries: 0, timeout: 0, deadline: 0}
`,
			chains: map[string]string{
				"once":  "surface → tool once",
				"other": "surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool other",
			},
		},
		{
			name:   "retries at the cap are allowed",
			yaml:   "defaults: {retries: 10}\n",
			chains: map[string]string{"any": "surface → retry 10 (500ms..30s ×2 +25%) → tool any"},
		},
		{
			name: "a constant backoff, an uncapped one",
			yaml: `
tools:
  constant: {retries: 2, backoff: {base: 1s}}
  doubling: {retries: 2, backoff: {base: 1s, multiplier: 2}}
`,
			chains: map[string]string{
				"constant": "surface → retry 2 (1s each) → tool constant",
				"doubling": "surface → retry 2 (1s ×2 uncapped) → tool doubling",
			},
		},
		{
			name: "tracing, a fallback shorthand with its default kinds, approval per call, side effects without a key",
			yaml: `
defaults: {tracing: true}
dependencies:
  payments: {concurrency: 2}
tools:
  pay: {dependency: payments, retries: 1, side_effects: not_idempotent, approval: per_call, timeout: 5s}
  lookup: {fallback: cached_lookup, tracing: false}
`,
			chains: map[string]string{
				"pay":    "trace → surface → retry 1 (500ms..30s ×2 +25%; not after a timeout) → approval per call → bulkhead payments(2) → timeout 5s → tool pay",
				"lookup": "surface → fallback(cached_lookup) → tool lookup",
			},
		},
		{
			name: "JSON is YAML too",
			yaml: `{"defaults": {"deadline": "10s"}, "tools": {"a": {"retries": 1, "timeout": "2s"}}}`,
			chains: map[string]string{
				"a": "surface → deadline 10s → retry 1 (500ms..30s ×2 +25%) → timeout 2s → tool a",
			},
		},
		{
			name: "anchors and merge keys share settings",
			yaml: `
x-billing: &billing_tool {retries: 3, timeout: 2s, backoff: {base: 250ms, max: 4s, multiplier: 2}}
tools:
  fetch_invoice: {<<: *billing_tool}
  list_invoices: {<<: *billing_tool, timeout: 5s}
  same: *billing_tool
`,
			chains: map[string]string{
				"fetch_invoice": "surface → retry 3 (250ms..4s ×2) → timeout 2s → tool fetch_invoice",
				"list_invoices": "surface → retry 3 (250ms..4s ×2) → timeout 5s → tool list_invoices",
				"same":          "surface → retry 3 (250ms..4s ×2) → timeout 2s → tool same",
			},
		},
		{
			name: "a fallback chain that ends is not a cycle",
			yaml: `
tools:
  a: {fallback: b}
  b: {fallback: c}
`,
			chains: map[string]string{"a": "surface → fallback(b) → tool a", "b": "surface → fallback(c) → tool b", "c": "surface → tool c"},
		},
		{
			name: "null entries mean the defaults",
			yaml: `
defaults: {retries: 1}
tools:
  a:
  b: {timeout: ~}
`,
			chains: map[string]string{"a": "surface → retry 1 (500ms..30s ×2 +25%) → tool a", "b": "surface → retry 1 (500ms..30s ×2 +25%) → tool b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := policyfile.Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for tool, want := range tt.chains {
				if got := cfg.Describe(tool); got != want {
					t.Errorf("Describe(%q)\n got: %s\nwant: %s", tool, got, want)
				}
			}
		})
	}
}

// wantProblem is one problem a bad file must produce: the tool (or
// dependency), the field, the line and words of the message.
type wantProblem struct {
	tool, dep, field string
	line             int
	says             string
}

func TestBadConfigsNameTheToolTheFieldAndTheLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []wantProblem // every problem of the file, in order
	}{
		{
			name: "a typo in a field is named with the field meant",
			yaml: "tools:\n  fetch_invoice:\n    retries: 3\n    timout: 2s\n",
			want: []wantProblem{{tool: "fetch_invoice", field: "timout", line: 4, says: `unknown field "timout"; did you mean "timeout"?`}},
		},
		{
			name: "an unknown field far from any lists the fields",
			yaml: "defaults:\n  colour: red\n",
			want: []wantProblem{{field: "colour", line: 2, says: "the fields here are retries, timeout, deadline, backoff, tracing"}},
		},
		{
			name: "negative retries",
			yaml: "tools:\n  fetch_invoice: {retries: -1}\n",
			want: []wantProblem{{tool: "fetch_invoice", field: "retries", line: 2, says: "retries -1 is negative: use 0 for a single attempt"}},
		},
		{
			name: "retries above the cap name the limit",
			yaml: "tools:\n  fetch_invoice: {retries: 11}\n",
			want: []wantProblem{{tool: "fetch_invoice", field: "retries", line: 2, says: "retries 11 is more than 10, the most a policies file allows"}},
		},
		{
			name: "the largest count the file once took for retries is above the cap too",
			yaml: "defaults:\n  retries: 2147483647\n",
			want: []wantProblem{{field: "retries", line: 2, says: "retries 2147483647 is more than 10"}},
		},
		{
			name: "two tools whose names differ only in case",
			yaml: "tools:\n  Refund: {approval: per_call}\n  refund: {retries: 2}\n",
			want: []wantProblem{{tool: "refund", line: 3, says: `"refund" and "Refund" (line 2) name one tool for langchaingo, whose executor looks tools up by their upper-cased name: merge the two entries, or rename one`}},
		},
		{
			name: "jitter above 1",
			yaml: "defaults:\n  backoff:\n    jitter: 1.5\n",
			want: []wantProblem{{field: "backoff.jitter", line: 3, says: "jitter 1.5 is outside [0, 1]"}},
		},
		{
			name: "jitter below 0 in a tool",
			yaml: "tools:\n  a:\n    backoff: {jitter: -0.1}\n",
			want: []wantProblem{{tool: "a", field: "backoff.jitter", line: 3, says: "jitter -0.1 is outside [0, 1]"}},
		},
		{
			name: "a timeout longer than the deadline, in the tool",
			yaml: "defaults: {deadline: 30s}\ntools:\n  fetch_invoice:\n    timeout: 40s\n",
			want: []wantProblem{{tool: "fetch_invoice", field: "timeout", line: 4, says: "attempt timeout 40s is longer than the deadline 30s"}},
		},
		{
			name: "a deadline shorter than the default timeout is the tool's",
			yaml: "defaults: {timeout: 10s}\ntools:\n  quick:\n    deadline: 5s\n",
			want: []wantProblem{{tool: "quick", field: "deadline", line: 4, says: "attempt timeout 10s is longer than the deadline 5s"}},
		},
		{
			name: "a timeout longer than the deadline in the defaults is reported once",
			yaml: "defaults: {timeout: 40s, deadline: 30s}\ntools:\n  a: {retries: 1}\n  b: {retries: 2}\n",
			want: []wantProblem{{field: "timeout", line: 1, says: "attempt timeout 40s is longer than the deadline 30s"}},
		},
		{
			name: "an unknown dependency",
			yaml: "dependencies:\n  billing: {concurrency: 4}\ntools:\n  fetch_invoice:\n    dependency: biling\n",
			want: []wantProblem{{tool: "fetch_invoice", field: "dependency", line: 5, says: `unknown dependency "biling": declare it under dependencies, or use one of billing; did you mean "billing"?`}},
		},
		{
			name: "a fallback cycle a → b → a",
			yaml: "tools:\n  a:\n    fallback: b\n  b:\n    fallback: {tool: a}\n",
			want: []wantProblem{{tool: "a", field: "fallback.tool", line: 3, says: "fallback cycle a → b → a"}},
		},
		{
			name: "a longer cycle is reported once",
			yaml: "tools:\n  a: {fallback: b}\n  b: {fallback: c}\n  c: {fallback: a}\n  d: {fallback: a}\n",
			want: []wantProblem{{tool: "a", field: "fallback.tool", line: 2, says: "fallback cycle a → b → c → a"}},
		},
		{
			name: "a tool that falls back to itself",
			yaml: "tools:\n  search:\n    fallback: search\n",
			want: []wantProblem{{tool: "search", field: "fallback.tool", line: 3, says: "search falls back to itself"}},
		},
		{
			name: "a fallback on a kind that never falls back, and a misspelt kind",
			yaml: "tools:\n  search:\n    fallback: {tool: archive, on: [canceled, tool-faild]}\n",
			want: []wantProblem{
				{tool: "search", field: "fallback.on[0]", line: 3, says: "canceled never falls back"},
				{tool: "search", field: "fallback.on[1]", line: 3, says: `"tool-faild" is not a failure kind: use some of tool-failed, tool-timeout, circuit-open, tool-error, tool-busy, budget-exceeded, tool-panic; did you mean "tool-failed"?`},
			},
		},
		{
			name: "a fallback with no tool",
			yaml: "tools:\n  search:\n    fallback: {on: [tool-failed]}\n",
			want: []wantProblem{{tool: "search", field: "fallback", line: 3, says: "fallback needs a tool"}},
		},
		{
			name: "an args schema that is not a JSON Schema",
			yaml: "tools:\n  search:\n    args_schema: {type: object, required: query}\n",
			want: []wantProblem{{tool: "search", field: "args_schema", line: 3, says: "not a valid JSON Schema: at /required: got string, want array"}},
		},
		{
			name: "an args schema for something other than an object",
			yaml: "tools:\n  search:\n    args_schema: {type: string}\n",
			want: []wantProblem{{tool: "search", field: "args_schema", line: 3, says: `its type must be "object"`}},
		},
		{
			name: "durations need a unit and must parse",
			yaml: "defaults:\n  timeout: 2\n  deadline: 1d\n",
			want: []wantProblem{
				{field: "timeout", line: 2, says: "timeout 2 has no unit: write a Go duration such as 2s or 2ms"},
				{field: "deadline", line: 3, says: `"1d" is not a duration`},
			},
		},
		{
			name: "values of the wrong type",
			yaml: "defaults:\n  retries: three\n  tracing: yes\n  backoff: 1s\n",
			want: []wantProblem{
				{field: "retries", line: 2, says: `must be a whole number, not the text "three"`},
				{field: "tracing", line: 3, says: `must be true or false, not the text "yes"`},
				{field: "backoff", line: 4, says: "must be a mapping of fields"},
			},
		},
		{
			name: "the breaker, bulkhead and budget of a dependency",
			yaml: "dependencies:\n  billing:\n    breaker: {failures: 5, window: 3, delay: -1s, probs: 1}\n    max_wait: 1s\n    retry_budget: 1.5\n",
			want: []wantProblem{
				{dep: "billing", field: "breaker.window", line: 3, says: "window 3 is smaller than failures 5"},
				{dep: "billing", field: "breaker.delay", line: 3, says: "delay -1s is negative"},
				{dep: "billing", field: "breaker.probs", line: 3, says: `did you mean "probes"?`},
				{dep: "billing", field: "max_wait", line: 4, says: "max_wait 1s does nothing without concurrency"},
				{dep: "billing", field: "retry_budget", line: 5, says: "retry_budget 1.5 is outside [0, 1]"},
			},
		},
		{
			name: "fields in the wrong place say where they belong",
			yaml: "timeout: 2s\ndefaults:\n  dependency: billing\ntools:\n  a: {concurrency: 3}\ndependencies:\n  billing: {retries: 2}\n",
			want: []wantProblem{
				{field: "timeout", line: 1, says: "put it under defaults (for every tool) or under a tool"},
				{field: "dependency", line: 3, says: "dependency is set per tool, not in defaults"},
				{tool: "a", field: "concurrency", line: 5, says: "concurrency belongs to a dependency"},
				{dep: "billing", field: "retries", line: 7, says: "retries is set per tool, not per dependency"},
			},
		},
		{
			name: "enumerations list their values",
			yaml: "tools:\n  refund:\n    side_effects: maybe\n    approval: every_attemp\n",
			want: []wantProblem{
				{tool: "refund", field: "side_effects", line: 3, says: `"maybe" is not one of none, idempotent, not_idempotent`},
				{tool: "refund", field: "approval", line: 4, says: `did you mean "every_attempt"?`},
			},
		},
		{
			name: "a backoff max below its base",
			yaml: "tools:\n  a:\n    backoff: {base: 2s, max: 1s}\n",
			want: []wantProblem{{tool: "a", field: "backoff.max", line: 3, says: "backoff max 1s is shorter than its base 2s"}},
		},
		{
			name: "an unknown version",
			yaml: "version: 2\n",
			want: []wantProblem{{field: "version", line: 1, says: "version 2 is not known"}},
		},
		{
			name: "not YAML at all",
			yaml: "tools:\n  a: {retries: 1\n",
			want: []wantProblem{{line: 2, says: "the file is not valid YAML"}},
		},
		{
			name: "a field given twice",
			yaml: "tools:\n  a: {retries: 1}\n  a: {retries: 2}\n",
			want: []wantProblem{{line: 3, says: `mapping key "a" already defined`}},
		},
		{
			name: "a list where a mapping belongs",
			yaml: "- retries: 1\n",
			want: []wantProblem{{line: 1, says: "must be a mapping of fields"}},
		},
		{
			name: "two documents",
			yaml: "tools: {}\n---\ntools: {}\n",
			want: []wantProblem{{line: 3, says: "the file holds 2 YAML documents"}},
		},
		{
			name: "an alias to no anchor",
			yaml: "tools:\n  a: *nothing\n",
			want: []wantProblem{{tool: "a", line: 2, says: "alias *nothing names no anchor"}},
		},
		{
			name: "an alias inside its own anchor",
			yaml: "tools:\n  a:\n    args_schema: &s {type: object, properties: {p: *s}}\n",
			want: []wantProblem{{tool: "a", field: "args_schema", line: 3, says: "nests deeper than 32 levels here (an alias inside the anchor it names?)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := policyfile.Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse accepted the file (%v)", cfg.Tools())
			}
			var ce *policyfile.Error
			if !errors.As(err, &ce) {
				t.Fatalf("the error is %T, not a *Error: %v", err, err)
			}
			if len(ce.Problems) != len(tt.want) {
				t.Errorf("%d problems; want %d:\n%v", len(ce.Problems), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i >= len(ce.Problems) {
					break
				}
				p := ce.Problems[i]
				if p.Tool != w.tool || p.Dependency != w.dep || p.Field != w.field || p.Line != w.line || !strings.Contains(p.Message, w.says) {
					t.Errorf("problem %d is\n  tool %q, dependency %q, field %q, line %d: %s\nwant\n  tool %q, dependency %q, field %q, line %d: …%s…",
						i+1, p.Tool, p.Dependency, p.Field, p.Line, p.Message, w.tool, w.dep, w.field, w.line, w.says)
				}
				// What a person reads names all of it too.
				text := err.Error()
				for _, part := range []string{w.tool, w.dep, w.field} {
					if !strings.Contains(text, part) {
						t.Errorf("the error text lacks %q:\n%s", part, text)
					}
				}
			}
		})
	}
}

func TestAllProblemsAreReportedInOnePass(t *testing.T) {
	_, err := policyfile.Parse([]byte(`
defaults:
  retries: -1
  timout: 3s
tools:
  a: {dependency: nowhere, backoff: {jitter: 2}}
  b: {timeout: 40s, deadline: 30s}
`))
	var ce *policyfile.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v", err)
	}
	want := []string{
		"line 3, column 3: defaults.retries: retries -1 is negative",
		`line 4, column 3: defaults.timout: unknown field "timout"; did you mean "timeout"?`,
		"line 6, column 38: tools.a.backoff.jitter: jitter 2 is outside [0, 1]",
		`line 6, column 7: tools.a.dependency: unknown dependency "nowhere": declare it under dependencies`,
		"line 7, column 7: tools.b.timeout: attempt timeout 40s is longer than the deadline 30s",
	}
	if len(ce.Problems) != len(want) {
		t.Fatalf("%d problems; want %d:\n%v", len(ce.Problems), len(want), err)
	}
	for _, w := range want {
		found := false
		for _, p := range ce.Problems {
			found = found || strings.HasPrefix(p.Error(), w)
		}
		if !found {
			t.Errorf("no problem reads %q in:\n%v", w, err)
		}
	}
	if !strings.HasPrefix(err.Error(), "toolsafe: the policies file has 5 problems:\n") {
		t.Errorf("the error begins %q", strings.SplitN(err.Error(), "\n", 2)[0])
	}
	// errors.As finds each problem.
	var p *policyfile.Problem
	if !errors.As(err, &p) || p.Line != 3 {
		t.Errorf("errors.As found %+v; want the first problem", p)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Run("a good YAML file", func(t *testing.T) {
		cfg, err := policyfile.Load(filepath.Join("testdata", "policies", "good.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(cfg.Tools(), ","), "fetch_invoice,search"; got != want {
			t.Errorf("Tools() = %s; want %s (the file's order)", got, want)
		}
		if got, want := cfg.Describe("fetch_invoice"), "surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s → tool fetch_invoice"; got != want {
			t.Errorf("Describe = %s; want %s", got, want)
		}
	})
	t.Run("a good JSON file", func(t *testing.T) {
		cfg, err := policyfile.Load(filepath.Join("testdata", "policies", "good.json"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.Describe("fetch_invoice"), "surface → deadline 10s → retry 3 (250ms..5s ×2 +25%) → timeout 2s → tool fetch_invoice"; got != want {
			t.Errorf("Describe = %s; want %s", got, want)
		}
	})
	t.Run("the problems of a bad file name the file", func(t *testing.T) {
		path := filepath.Join("testdata", "policies", "bad.yaml")
		_, err := policyfile.Load(path)
		var ce *policyfile.Error
		if !errors.As(err, &ce) || ce.File != path {
			t.Fatalf("error %v; want a *Error for %s", err, path)
		}
		for _, want := range []string{
			path + ":2:3: defaults.retries: retries -1 is negative",
			path + ":3:3: defaults.timeout: attempt timeout 40s is longer than the deadline 30s",
			path + ":5:13: defaults.backoff.jitter: jitter 1.5 is outside [0, 1]",
			path + `:8:5: tools.fetch_invoice.timout: unknown field "timout"; did you mean "timeout"?`,
			path + ":10:5: tools.search.fallback.tool: search falls back to itself",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error lacks %q:\n%v", want, err)
			}
		}
	})
	t.Run("an embedded file", func(t *testing.T) {
		fsys := fstest.MapFS{"policies.yaml": {Data: []byte("tools:\n  a: {retries: 1}\n  b: {timout: 1s}\n")}}
		_, err := policyfile.LoadFS(fsys, "policies.yaml")
		if err == nil || !strings.Contains(err.Error(), `policies.yaml:3:7: tools.b.timout: unknown field "timout"`) {
			t.Errorf("error %v; want the problem with the file's name", err)
		}
		if _, err := policyfile.LoadFS(fsys, "other.yaml"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v; want one that is fs.ErrNotExist", err)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		_, err := policyfile.Load(filepath.Join(t.TempDir(), "nope.yaml"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("error %v; want one that is os.ErrNotExist", err)
		}
	})
}

func TestAnAliasBombEndsWithAnError(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		b.WriteString("x-a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("tools:\n  t: {args_schema: {type: object, enum: *a11}}\n")
	_, err := policyfile.Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "follows aliases more than") {
		t.Errorf("error %v; want the alias limit", err)
	}
}

// The policies files of the examples stay valid: a broken one would fail
// the example only when it runs.
func TestTheExamplesPoliciesAreValid(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no examples/*/policies.yaml")
	}
	for _, path := range paths {
		if _, err := policyfile.Load(path); err != nil {
			t.Errorf("%v", err)
		}
	}
	cfg, err := policyfile.Load(filepath.Join("..", "examples", "billing", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The demo's fetch_invoice as examples/billing/main.go wraps it in code.
	if got, want := cfg.Describe("fetch_invoice"), "trace → surface → deadline 15s → retry 3 (250ms..5s ×2 +25%) → timeout 2s → tool fetch_invoice"; got != want {
		t.Errorf("fetch_invoice: %s; want %s", got, want)
	}
}
