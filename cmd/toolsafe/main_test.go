package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRun(t *testing.T) {
	testdata := filepath.Join("..", "..", "policyfile", "testdata", "policies")
	good := filepath.Join(testdata, "good.yaml")
	bad := filepath.Join(testdata, "bad.yaml")
	approval := filepath.Join("..", "..", "examples", "approval", "policies.yaml")
	dir := t.TempDir()
	issue := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(issue, []byte(`
defaults:   {retries: 2, timeout: 10s, deadline: 30s,
             backoff: {base: 500ms, max: 30s, multiplier: 2, jitter: 0.25}}
dependencies:
  billing:  {breaker: {failures: 5, window: 10, delay: 30s, probes: 1},
             concurrency: 8, max_wait: 1s, retry_budget: 0.2}
tools:
  fetch_invoice: {dependency: billing, retries: 3, timeout: 2s}
  search:        {fallback: {tool: archive_search, on: [tool-failed, circuit-open]},
                  args_schema: {type: object, required: [query], properties: {query: {type: string}}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fleet := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(fleet, []byte(`
dependencies:
  billing: {breaker: {failures: 5, delay: 30s, probes: 2}, retry_budget: 0.2, concurrency: 8, shared: redis}
tools:
  fetch_invoice: {dependency: billing, retries: 2, timeout: 2s}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	goodYAML, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    io.Reader // nil: empty
		stdout   io.Writer // nil: recorded
		status   int
		out      []string // parts of stdout that must be there
		errOut   []string // parts of stderr
		noStdout bool
	}{
		{
			name:     "approvals points at the command of redisstore's module",
			args:     []string{"approvals", "list"},
			status:   2,
			errOut:   []string{"go get -tool github.com/toolsafe/toolsafe/redisstore/cmd/toolsafe-approvals@latest\n", "go tool toolsafe-approvals [-redis ADDR] list\n"},
			noStdout: true,
		},
		{
			name:   "a good file prints each tool's chain and exits 0",
			args:   []string{"check", good},
			status: 0,
			out: []string{
				good + ": valid: 2 tools, 0 dependencies\n",
				"\n  fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s → tool fetch_invoice\n",
				"\n  search: surface → args schema → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search\n",
				"\n  any other tool (the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool\n",
			},
		},
		{
			name:   "the issue's file shows its dependency and its fallback",
			args:   []string{"check", issue},
			status: 0,
			out: []string{
				": valid: 2 tools, 1 dependency\n",
				"\n  billing: breaker: opens after 5 failures in the last 10 attempts, stays open 30s, then 1 probe; bulkhead: 8 attempts in flight, wait up to 1s; retry budget: 20% of attempts in flight\n",
				"\n  fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%; budget billing 20%) → breaker billing → bulkhead billing(8, wait 1s) → timeout 2s → tool fetch_invoice\n",
				"\n  search: surface → args schema → fallback(archive_search on tool-failed, circuit-open) → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search\n",
			},
		},
		{
			name:   "a dependency shared by a fleet (its store comes from code: not checked)",
			args:   []string{"check", fleet},
			status: 0,
			out: []string{
				": valid: 1 tool, 1 dependency\n",
				"\n  billing: breaker: opens after 5 failures in a row, stays open 30s, then 2 probes; bulkhead: 8 attempts in flight, no wait; retry budget: 20% of the fleet's attempts over a sliding window; shared through redis by every replica: the breaker's state and the retry budget's counts (the bulkhead stays per replica)\n",
				"\n  fetch_invoice: surface → retry 2 (500ms..30s ×2 +25%; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → bulkhead billing(8) → timeout 2s → tool fetch_invoice\n",
			},
		},
		{
			name:     "a bad file lists every problem with its line and exits 1",
			args:     []string{"check", bad},
			status:   1,
			noStdout: true,
			errOut: []string{
				bad + ":2:3: defaults.retries: retries -1 is negative",
				bad + ":3:3: defaults.timeout: attempt timeout 40s is longer than the deadline 30s",
				bad + ":5:13: defaults.backoff.jitter: jitter 1.5 is outside [0, 1]",
				bad + `:8:5: tools.fetch_invoice.timout: unknown field "timout"; did you mean "timeout"?`,
				bad + ":10:5: tools.search.fallback.tool: search falls back to itself",
				bad + ": 5 problems\n",
			},
		},
		{
			name:   "one bad file among good ones exits 1 and still checks the others",
			args:   []string{"check", good, bad},
			status: 1,
			out:    []string{good + ": valid"},
			errOut: []string{bad + ": 5 problems"},
		},
		{
			name:   "-tools checks the file against the agent's tools",
			args:   []string{"check", "-tools", "fetch_invoice,serch", good},
			status: 1,
			errOut: []string{
				good + `:14:3: tools.search: "search" is named in the file but is not one of the agent's tools given (fetch_invoice, serch): add it to them, or remove its entry; did you mean "serch"?`,
				good + ": 1 problem\n",
			},
		},
		{
			name:   "-tools lists the agent's tools the file does not name",
			args:   []string{"check", "-tools", "fetch_invoice,search,list_invoices", good},
			status: 0,
			out:    []string{"\n  list_invoices (not in the file: the defaults): surface → deadline 30s"},
		},
		{
			name:   "-tools accepts a file whose tools need an approver, which comes from code",
			args:   []string{"check", "-tools", "refund", approval},
			status: 0,
			out:    []string{"\n  refund: surface → retry 2 (100ms..1s ×2 +25%; same idempotency key) → approval every attempt → timeout 2s → tool refund\n"},
		},
		{
			name:   "-tools refuses names that collide for langchaingo",
			args:   []string{"check", "-tools", "refund,Refund", approval},
			status: 1,
			errOut: []string{`two of the agent's tools given are named "refund" and "Refund"`},
		},
		{
			name:   "flags may come after the files",
			args:   []string{"check", good, "-tools", "fetch_invoice,search,list_invoices"},
			status: 0,
			out:    []string{good + ": valid", "\n  list_invoices (not in the file: the defaults)"},
		},
		{
			name:   "after -- every argument is a file",
			args:   []string{"check", "--", "-tools"},
			status: 3,
			errOut: []string{"-tools: could not be checked: toolsafe: open -tools: no such file or directory"},
		},
		{
			name:   "- reads standard input",
			args:   []string{"check", "-"},
			stdin:  strings.NewReader(string(goodYAML)),
			status: 0,
			out:    []string{"<stdin>: valid: 2 tools, 0 dependencies\n"},
		},
		{
			name:     "the problems of standard input name it",
			args:     []string{"check", "-"},
			stdin:    strings.NewReader("tools:\n  a: {timout: 1s}\n"),
			status:   1,
			noStdout: true,
			errOut:   []string{`<stdin>:2:7: tools.a.timout: unknown field "timout"`},
		},
		{
			name:     "standard input larger than MaxSize is refused without reading it all",
			args:     []string{"check", "-"},
			stdin:    io.LimitReader(neverEnding{}, 1<<40),
			status:   1,
			noStdout: true,
			errOut:   []string{"<stdin>: the file holds more than 1048576 bytes (1 MiB)"},
		},
		{
			name:     "a missing file could not be checked: 3",
			args:     []string{"check", filepath.Join(dir, "nope.yaml")},
			status:   3,
			noStdout: true,
			errOut:   []string{"nope.yaml: could not be checked: toolsafe: open ", "no such file or directory"},
		},
		{
			name:     "a directory could not be checked: 3",
			args:     []string{"check", dir},
			status:   3,
			noStdout: true,
			errOut:   []string{dir + ": could not be checked: ", "is a directory"},
		},
		{
			name:     "standard input that fails to read: 3",
			args:     []string{"check", "-"},
			stdin:    iotest.ErrReader(errors.New("the disk is gone")),
			status:   3,
			noStdout: true,
			errOut:   []string{"<stdin>: could not be checked: reading standard input: the disk is gone"},
		},
		{
			name:   "an unreadable file wins over an invalid one: 3",
			args:   []string{"check", bad, filepath.Join(dir, "nope.yaml")},
			status: 3,
			errOut: []string{bad + ": 5 problems", "nope.yaml: could not be checked"},
		},
		{
			name:   "output that cannot be written: 3",
			args:   []string{"check", good},
			stdout: failingWriter{},
			status: 3,
			errOut: []string{"toolsafe: writing the output: the pipe is closed"},
		},
		{name: "version", args: []string{"version"}, status: 0, out: []string{"toolsafe ", " go1."}},
		{name: "version with an argument: 2", args: []string{"version", "now"}, status: 2, errOut: []string{"takes no arguments"}, noStdout: true},
		{name: "no command: 2", args: nil, status: 2, errOut: []string{"Usage:"}, noStdout: true},
		{name: "an unknown command: 2", args: []string{"chek"}, status: 2, errOut: []string{`unknown command "chek"`}, noStdout: true},
		{name: "check without a file: 2", args: []string{"check"}, status: 2, errOut: []string{"no file to check", "Usage: toolsafe check"}, noStdout: true},
		{name: "check with an unknown flag: 2", args: []string{"check", "-tool", "a", good}, status: 2, errOut: []string{"flag provided but not defined: -tool", "Usage: toolsafe check"}, noStdout: true},
		{name: "- twice: 2", args: []string{"check", "-", "-"}, status: 2, errOut: []string{"- (standard input) is given 2 times"}, noStdout: true},
		{name: "help", args: []string{"help"}, status: 0, out: []string{"toolsafe check [-tools name,...] [-mcp NAME=TOOLS.json]... FILE..."}},
		{name: "--help", args: []string{"--help"}, status: 0, out: []string{"toolsafe check [-tools name,...] [-mcp NAME=TOOLS.json]... FILE...", "Exit status: 0"}},
		{name: "-h", args: []string{"-h"}, status: 0, out: []string{"Usage:"}},
		{name: "check --help prints the check's usage to stdout", args: []string{"check", "--help"}, status: 0, out: []string{"Usage: toolsafe check", "-tools name,..."}},
		{name: "check -h after a file", args: []string{"check", good, "-h"}, status: 0, out: []string{"Usage: toolsafe check"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			var out io.Writer = &stdout
			if tt.stdout != nil {
				out = tt.stdout
			}
			stdin := tt.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			status := run(tt.args, stdin, out, &stderr)
			if status != tt.status {
				t.Errorf("exit status %d; want %d\nstdout:\n%s\nstderr:\n%s", status, tt.status, stdout.String(), stderr.String())
			}
			for _, want := range tt.out {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tt.errOut {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if tt.noStdout && stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
			if tt.status != 2 && strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("a status other than usage printed the usage to stderr:\n%s", stderr.String())
			}
		})
	}
}

// neverEnding reads spaces forever.
type neverEnding struct{}

func (neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("the pipe is closed") }

// The examples' policies files are valid, as CI checks them with this
// command.
func TestTheExamplesPoliciesFilesPass(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "policies.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples/*/policies.yaml (%v)", err)
	}
	var stdout, stderr strings.Builder
	if status := run(append([]string{"check"}, paths...), strings.NewReader(""), &stdout, &stderr); status != 0 {
		t.Errorf("exit status %d:\n%s", status, stderr.String())
	}
}

// Issue 27: toolsafe check prints, per MCP tool of a saved tools/list, its
// side-effect class and where it came from, so that a person reviewing the
// file sees which tools may act and which are gated.
func TestCheckPrintsMCPSideEffects(t *testing.T) {
	dir := t.TempDir()
	policies := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(policies, []byte(`
defaults: {retries: 2}
mcp_servers:
  files: {trusted: true}
tools:
  move_file: {approval: every_attempt}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// As server-filesystem lists them (tools/list result, trimmed).
	list := filepath.Join(dir, "files.json")
	if err := os.WriteFile(list, []byte(`{"tools": [
  {"name": "read_text_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true, "openWorldHint": false}},
  {"name": "edit_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false, "idempotentHint": false, "destructiveHint": true}},
  {"name": "move_file", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false, "idempotentHint": false, "destructiveHint": true}}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wiki := filepath.Join(dir, "wiki.json")
	if err := os.WriteFile(wiki, []byte(`[{"name": "delete_page", "inputSchema": {"type": "object"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if status := run([]string{"check", "-mcp", "files=" + list, "-mcp", "wiki=" + wiki, policies}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	for _, want := range []string{
		"  move_file: surface → retry 2 (500ms..30s ×2 +25%) → approval every attempt → tool move_file\n" +
			"    MCP (files): side effects not_idempotent (setting); server trusted; approval candidate: destructive (trusted hint), approval every_attempt\n",
		"  read_text_file (not in the file: the defaults): surface → retry 2 (500ms..30s ×2 +25%) → tool read_text_file\n" +
			"    MCP (files): side effects none (trusted hint); server trusted\n",
		// go-sdk reads an absent readOnlyHint or idempotentHint as false, so
		// mcptools takes false for unsaid, and so does check.
		"  edit_file (not in the file: the defaults): surface → retry 2 (500ms..30s ×2 +25%) → tool edit_file\n" +
			"    MCP (files): side effects not_idempotent (default); server trusted; approval candidate: destructive (trusted hint), not gated: set approval: every_attempt to gate it\n",
		"    MCP (wiki): side effects not_idempotent (default); approval candidate: destructive (default), not gated",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout.String())
		}
	}
	if status := run([]string{"check", "-mcp", "files", policies}, nil, &stdout, &stderr); status != 2 || !strings.Contains(stderr.String(), "-mcp takes NAME=FILE") {
		t.Errorf("-mcp without a file: status %d, %q", status, stderr.String())
	}
}

// Issue 31, item 5: File.Describe had no command. toolsafe describe prints
// the chain of each tool named, the file's or not, or of every tool; an
// invalid file is reported as check reports it.
func TestDescribePrintsTheChainOfEachToolNamed(t *testing.T) {
	good := filepath.Join("..", "..", "policyfile", "testdata", "policies", "good.yaml")
	bad := filepath.Join("..", "..", "policyfile", "testdata", "policies", "bad.yaml")
	dir := t.TempDir()
	list := filepath.Join(dir, "files.json")
	if err := os.WriteFile(list, []byte(`{"tools": [{"name": "edit_file", "annotations": {"destructiveHint": true}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	goodYAML, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	fetch := "fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s → tool fetch_invoice\n"
	search := "search: surface → args schema → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search\n"
	other := "any other tool (the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool\n"
	tests := []struct {
		name           string
		args           []string
		stdin          string
		status         int
		stdout, stderr string // exactly
		stderrHas      string
	}{
		{name: "the tools named, in order", args: []string{"describe", good, "search", "fetch_invoice"}, stdout: search + fetch},
		{name: "a tool the file does not name gets the defaults, and says so", args: []string{"describe", good, "list_invoices"},
			stdout: "list_invoices (not in the file: the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool list_invoices\n"},
		{name: "no tool: every tool of the file and any other", args: []string{"describe", good}, stdout: fetch + search + other},
		{name: "- reads standard input", args: []string{"describe", "-", "fetch_invoice"}, stdin: string(goodYAML), stdout: fetch},
		{name: "an MCP tool's side effects follow its line", args: []string{"describe", "-mcp", "files=" + list, good, "edit_file"},
			stdout: "edit_file (not in the file: the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool edit_file\n" +
				"  MCP (files): side effects not_idempotent (default); approval candidate: destructive (hint), not gated: set approval: every_attempt to gate it\n"},
		{name: "without a tool, the MCP tools too", args: []string{"describe", good, "-mcp", "files=" + list},
			stdout: fetch + search + "edit_file (not in the file: the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool edit_file\n" +
				"  MCP (files): side effects not_idempotent (default); approval candidate: destructive (hint), not gated: set approval: every_attempt to gate it\n" + other},
		{name: "an invalid file: its problems, 1", args: []string{"describe", bad, "search"}, status: 1,
			stderrHas: bad + `:8:5: tools.fetch_invoice.timout: unknown field "timout"; did you mean "timeout"?`},
		{name: "a missing file: 3", args: []string{"describe", filepath.Join(dir, "nope.yaml")}, status: 3, stderrHas: "nope.yaml: could not be checked: "},
		{name: "no file: 2", args: []string{"describe"}, status: 2, stderrHas: "toolsafe describe: no file to describe\n\nUsage: toolsafe describe"},
		{name: "- as a tool: 2", args: []string{"describe", good, "-"}, status: 2, stderrHas: "- (standard input) can only be the file"},
		{name: "-h", args: []string{"describe", "-h"}, stdout: describeUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			status := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if status != tt.status {
				t.Errorf("exit status %d; want %d\nstderr:\n%s", status, tt.status, stderr.String())
			}
			if tt.status == 0 && stdout.String() != tt.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tt.stdout)
			}
			if tt.status != 0 && stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.stderrHas) || tt.stderrHas == "" && stderr.Len() > 0 {
				t.Errorf("stderr:\n%s\nwant it to hold %q", stderr.String(), tt.stderrHas)
			}
		})
	}
}

// Issue 31, item 5: toolsafe check -tools said a tool "was not passed to
// WrapAll", which a person at a terminal never called. Its problems speak of
// the agent's tools given, and name them.
func TestCheckToolsSpeaksOfTheToolsGivenNotOfWrapAll(t *testing.T) {
	dir := t.TempDir()
	policies := filepath.Join(dir, "policies.yaml")
	if err := os.WriteFile(policies, []byte("tools:\n  refund: {retries: 1}\n  search: {fallback: archive_search}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if status := run([]string{"check", "-tools", "Search,search,serch", policies}, strings.NewReader(""), &stdout, &stderr); status != 1 {
		t.Fatalf("status %d; want 1\n%s", status, stderr.String())
	}
	want := policies + `:2:3: tools.refund: "refund" is named in the file but is not one of the agent's tools given (Search, search, serch): add it to them, or remove its entry` + "\n" +
		policies + `:3:12: tools.search.fallback.tool: unknown fallback tool "archive_search": it is not one of the agent's tools given; add it to them, or name one of Search, search, serch` + "\n" +
		policies + `: tools.search: two of the agent's tools given are named "Search" and "search": langchaingo's executor looks tools up by their upper-cased name, so the later would answer the model's calls to both, whatever policies the other has; rename one` + "\n" +
		policies + ": 3 problems\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
	if strings.Contains(strings.ReplaceAll(stderr.String(), policies, "policies.yaml"), "WrapAll") {
		t.Errorf("the terminal is told of WrapAll:\n%s", stderr.String())
	}
}

// Found with issue 31, item 5: the README's toolsafe check -mcp
// files=tools.json policies.yaml failed on the README's own file, because
// -mcp alone made the MCP tools the agent's only tools and every other tool
// of the file "not one of them". Without -tools the MCP tools are
// described, not checked against; with -tools they are among the agent's.
func TestMCPToolsAloneAreNotTheAgentsOnlyTools(t *testing.T) {
	dir := t.TempDir()
	policies := filepath.Join(dir, "policies.yaml")
	list := filepath.Join(dir, "files.json")
	for path, data := range map[string]string{
		policies: "tools:\n  fetch_invoice: {retries: 1}\n",
		list:     `{"tools": [{"name": "edit_file"}]}`,
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr strings.Builder
	if status := run([]string{"check", "-mcp", "files=" + list, policies}, strings.NewReader(""), &stdout, &stderr); status != 0 ||
		!strings.Contains(stdout.String(), "  edit_file (not in the file: the defaults): surface → tool edit_file\n    MCP (files): side effects not_idempotent (default)") {
		t.Errorf("-mcp alone: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if status := run([]string{"check", "-mcp", "files=" + list, "-tools", "fetch_invoice", policies}, strings.NewReader(""), &stdout, &stderr); status != 0 {
		t.Errorf("-mcp with -tools naming the file's tool: status %d\n%s", status, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if status := run([]string{"check", "-mcp", "files=" + list, "-tools", "search", policies}, strings.NewReader(""), &stdout, &stderr); status != 1 ||
		!strings.Contains(stderr.String(), `"fetch_invoice" is named in the file but is not one of the agent's tools given (search, edit_file)`) {
		t.Errorf("-mcp with -tools not naming the file's tool: status %d\n%s", status, stderr.String())
	}
}
