package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	good := filepath.Join("..", "..", "policyfile", "testdata", "policies", "good.yaml")
	bad := filepath.Join("..", "..", "policyfile", "testdata", "policies", "bad.yaml")
	issue := filepath.Join(t.TempDir(), "policies.yaml")
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
	tests := []struct {
		name     string
		args     []string
		status   int
		stdout   []string // lines or parts of lines that must be there
		stderr   []string
		noStdout bool
	}{
		{
			name:   "a good file prints each tool's chain and exits 0",
			args:   []string{"check", good},
			status: 0,
			stdout: []string{
				good + ": valid: 2 tools, 0 dependencies\n",
				"\n  fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s\n",
				"\n  search: surface → args schema → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s\n",
				"\n  any other tool (the defaults): surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s\n",
			},
		},
		{
			name:   "the issue's file shows its dependency and its fallback",
			args:   []string{"check", issue},
			status: 0,
			stdout: []string{
				": valid: 2 tools, 1 dependency\n",
				"\n  billing: breaker: opens after 5 failures in the last 10 attempts, stays open 30s, then 1 probe; bulkhead: 8 attempts in flight, wait up to 1s; retry budget: 20% of attempts in flight\n",
				"\n  fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%; budget billing 20%) → breaker billing → bulkhead billing(8, wait 1s) → timeout 2s\n",
				"\n  search: surface → args schema → fallback(archive_search on tool-failed, circuit-open) → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s\n",
			},
		},
		{
			name:     "a bad file lists every problem with its line and exits 1",
			args:     []string{"check", bad},
			status:   1,
			noStdout: true,
			stderr: []string{
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
			stdout: []string{good + ": valid"},
			stderr: []string{bad + ": 5 problems"},
		},
		{
			name:   "-tools checks the file against the agent's tools",
			args:   []string{"check", "-tools", "fetch_invoice,serch", good},
			status: 1,
			stderr: []string{
				good + `:14:3: tools.search: "search" is named in the file but was not passed to WrapAll: pass it, or remove its entry; did you mean "serch"?`,
				good + ": 1 problem\n",
			},
		},
		{
			name:   "-tools lists the agent's tools the file does not name",
			args:   []string{"check", "-tools", "fetch_invoice,search,list_invoices", good},
			status: 0,
			stdout: []string{"\n  list_invoices (not in the file: the defaults): surface → deadline 30s"},
		},
		{
			name:     "a missing file",
			args:     []string{"check", filepath.Join(t.TempDir(), "nope.yaml")},
			status:   1,
			noStdout: true,
			stderr:   []string{"nope.yaml: no such file or directory"},
		},
		{
			name:   "version",
			args:   []string{"version"},
			status: 0,
			stdout: []string{"toolsafe ", " go1."},
		},
		{name: "no command", args: nil, status: 2, stderr: []string{"Usage:"}, noStdout: true},
		{name: "an unknown command", args: []string{"chek"}, status: 2, stderr: []string{`unknown command "chek"`}, noStdout: true},
		{name: "check without a file", args: []string{"check"}, status: 2, stderr: []string{"Usage: toolsafe check"}, noStdout: true},
		{name: "help", args: []string{"help"}, status: 0, stdout: []string{"toolsafe check [-tools name,...] FILE..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			status := run(tt.args, &stdout, &stderr)
			if status != tt.status {
				t.Errorf("exit status %d; want %d\nstdout:\n%s\nstderr:\n%s", status, tt.status, stdout.String(), stderr.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if tt.noStdout && stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
		})
	}
}
