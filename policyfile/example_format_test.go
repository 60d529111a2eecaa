package policyfile_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// The format of a policies file, every field with its unit and what 0
// means. Every field is optional. Durations are Go duration strings
// ("500ms", "2s", "1m30s"; a bare 0 is allowed); a number without a unit
// is an error. A field left out takes the value from defaults, and a
// default left out means "none": no retry, no time limit, no breaker. The
// one exception is the backoff: retries with no backoff field at all wait
// as policy.DefaultBackoff (500ms, 1s, 2s, ... up to 30s, jitter 0.25),
// never in a busy loop; write base: 0 with multiplier: 1 to retry at once.
// Every unknown field is an error, so a typo like "timout" is caught.
func Example_format() {
	file, err := policyfile.Parse([]byte(`
version: 1                 # the format of this file; 1, the only one so far

defaults:                  # every tool, unless its own entry says otherwise
  retries: 2               # retries after the first attempt: 2 means up to 3 attempts; 0: none; at most 10
  timeout: 10s             # limit of each attempt, held even if the tool ignores its context; 0: none
  deadline: 30s            # limit of the whole call, attempts and waits included; 0: none
  backoff:                 # the wait before each retry: min(max, base × multiplier^(n−1)) × (1 + up to jitter); left out: 500ms..30s ×2 +25%
    base: 500ms            # the wait after the first failed attempt; 0: no wait
    max: 30s               # cap of a wait before jitter (a wait can reach max × (1+jitter)); 0: no cap
    multiplier: 2          # growth from one wait to the next; 0 or 1: constant
    jitter: 0.25           # in [0, 1]: the largest fraction added at random (0.25: 1s becomes 1s..1.25s)
  tracing: false           # true: spans and metrics per call and attempt (otelhook, global OTel providers)
  calls:                   # the loop guard, per agent run scoped with run.With; left out: no limit
    identical: 3           # the most calls with the same input (the same JSON)
    per_tool: 10           # the most calls of the tool, whatever the input
    total: 50              # the most calls of all tools, counted when this tool is called
    repeats: refuse        # refuse (the default): no identical call after one that failed for good; allow

dependencies:              # upstream services; the tools of one share its breaker, bulkhead and budget
  billing:
    breaker:               # circuit breaker; left out: none; {} gives the values that 0 means
      failures: 5          # failed attempts (transient or timed out) that open it ...; 0: 5
      window: 10           # ... among the last window attempts; 0: failures (that many in a row)
      delay: 30s           # how long it stays open before letting probes through; 0: 30s
      probes: 1            # attempts let through while half-open; all must succeed to close it; 0: 1
    concurrency: 8         # bulkhead: attempts in flight at once, over all its tools; 0: no bulkhead
    max_wait: 1s           # how long an attempt waits for a free slot before tool-busy; 0: not at all
    retry_budget: 0.2      # in [0, 1]: most share of in-flight attempts that may be retries (3 always may); 0: none
    shared: redis          # the breaker's state and the budget's counts shared by every replica of a fleet,
                           # through the store given with File.WithShared (package redisstore); the budget
                           # then caps retries at that share of the fleet's attempts over a sliding window;
                           # none (the default): this process only. The bulkhead stays per replica.

tools:                     # by the tool's Name(); a tool not named here gets the defaults
  fetch_invoice:
    dependency: billing    # a name under dependencies
    retries: 3             # as in defaults; so are timeout, deadline, backoff (field by field) and tracing
    timeout: 2s
  refund:
    dependency: billing
    side_effects: idempotent   # none (the default): safe to repeat; idempotent: it sends the call's
                               # idempotency key, so retries are safe; not_idempotent: no retry after
                               # an attempt that may have landed (timeout, reset); the model is told to check
    approval: every_attempt    # none (the default); per_call: one grant per call;
                               # every_attempt: each attempt, retries included, needs its own grant
  search:
    fallback:                  # or just fallback: archive_search
      tool: archive_search     # another tool passed to WrapAll, wrapped by its own policies
      on: [tool-failed, circuit-open]  # the failure kinds that route to it; left out: tool-failed,
                                       # tool-timeout, circuit-open and tool-error
    args_schema:               # JSON Schema of the tool's input, a JSON object; see package argschema
      type: object
      required: [query]
      properties: {query: {type: string, minLength: 1}}

mcp_servers:               # MCP servers, by the program's name for each (mcptools.WithServerName)
  files:
    trusted: true          # its tool annotations loosen too: read-only tools are retried freely,
                           # idempotent ones after an unknown outcome; false (the default): they only
                           # tighten, and every tool of the server has side effects without a key
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range file.Tools() {
		fmt.Printf("%s: %s\n", name, file.Describe(name))
	}
	fmt.Println("billing:", file.DescribeDependency("billing"))
	// Output:
	// fetch_invoice: surface → loop guard (identical 3, per tool 10, total 50) → deadline 30s → retry 3 (500ms..30s ×2 +25%; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → bulkhead billing(8, wait 1s) → timeout 2s → tool fetch_invoice
	// refund: surface → loop guard (identical 3, per tool 10, total 50) → deadline 30s → retry 2 (500ms..30s ×2 +25%; budget billing 20% (shared: redis); same idempotency key) → approval every attempt → breaker billing (shared: redis) → bulkhead billing(8, wait 1s) → timeout 10s → tool refund
	// search: surface → args schema → loop guard (identical 3, per tool 10, total 50) → fallback(archive_search on tool-failed, circuit-open) → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search
	// billing: breaker: opens after 5 failures in the last 10 attempts, stays open 30s, then 1 probe; bulkhead: 8 attempts in flight, wait up to 1s; retry budget: 20% of the fleet's attempts over a sliding window; shared through redis by every replica: the breaker's state and the retry budget's counts (the bulkhead stays per replica)
}

// Anchors, aliases and merge keys (<<: *billing_tool) work as YAML defines
// them; top-level fields whose names begin with "x-" are ignored, a place
// to define anchors.
func Example_anchors() {
	file, err := policyfile.Parse([]byte(`
x-billing: &billing_tool {dependency: billing, retries: 3, timeout: 2s}
dependencies:
  billing: {concurrency: 8}
tools:
  fetch_invoice: *billing_tool
  list_invoices: {<<: *billing_tool, timeout: 5s}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range file.Tools() {
		fmt.Printf("%s: %s\n", name, file.Describe(name))
	}
	// Output:
	// fetch_invoice: surface → retry 3 (500ms..30s ×2 +25%) → bulkhead billing(8) → timeout 2s → tool fetch_invoice
	// list_invoices: surface → retry 3 (500ms..30s ×2 +25%) → bulkhead billing(8) → timeout 5s → tool list_invoices
}

// A file past a limit is refused before it is parsed, with one problem
// that names the limit. Here the key x-a is the first level, and each
// bracket one more: MaxDepth-1 brackets are the most it may hold.
func Example_limits() {
	for _, n := range []int{policyfile.MaxDepth - 1, policyfile.MaxDepth} {
		_, err := policyfile.Parse([]byte("x-a: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"))
		var pe *policyfile.Error
		if errors.As(err, &pe) {
			fmt.Printf("%d brackets: %d problem: %v\n", n, len(pe.Problems), pe.Problems[0])
		} else {
			fmt.Printf("%d brackets: %v\n", n, err)
		}
	}
	// Output:
	// 31 brackets: <nil>
	// 32 brackets: 1 problem: line 1, column 37: the file nests deeper than 32 levels here, the most a policies file may: flatten it (anchors and aliases can share a setting instead)
}

// CheckTools checks the file against the names of the agent's tools, as
// WrapAll checks it against the tools passed, without wrapping anything: a
// tool named in the file but not given, and a fallback to a tool not given,
// are problems. toolsafe check -tools prints the same.
func ExampleFile_CheckTools() {
	file, err := policyfile.Parse([]byte(`
tools:
  fetch_invoice: {retries: 3}
  search: {fallback: archive_search}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(file.CheckTools("fetch_invoce", "search"))
	// Output:
	// toolsafe: the policies file has 2 problems:
	//   line 3, column 3: tools.fetch_invoice: "fetch_invoice" is named in the file but is not one of the agent's tools given (fetch_invoce, search): add it to them, or remove its entry; did you mean "fetch_invoce"?
	//   line 4, column 12: tools.search.fallback.tool: unknown fallback tool "archive_search": it is not one of the agent's tools given; add it to them, or name one of fetch_invoce, search
}

// What side effects WrapAll gives each tool of an MCP server, and where
// they come from, for a reviewer: the hints of its annotations (untrusted
// unless the program or mcp_servers trusts the server), or the file's own
// setting, which always wins. (The toolsafe command prints the same for a
// saved tools/list: toolsafe check -mcp files=tools.json policies.yaml.)
func ExampleFile_DescribeSideEffects() {
	file, err := policyfile.Parse([]byte(`
mcp_servers:
  files: {trusted: true}
tools:
  move_file: {side_effects: not_idempotent, approval: every_attempt}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	yes, no := true, false
	for _, t := range []struct {
		name string
		h    middleware.Hints
	}{
		{"read_file", middleware.Hints{ReadOnly: &yes, Server: "files"}},
		{"write_file", middleware.Hints{Idempotent: &yes, Destructive: &yes, Server: "files"}},
		{"move_file", middleware.Hints{Destructive: &yes, Server: "files"}},
		{"send_email", middleware.Hints{Destructive: &no, Server: "mail"}},
		{"delete_page", middleware.Hints{Server: "wiki"}},
	} {
		fmt.Printf("%s: %s\n", t.name, file.DescribeSideEffects(t.name, &t.h))
	}
	// Output:
	// read_file: side effects none (trusted hint); server trusted
	// write_file: side effects idempotent (trusted hint); server trusted; approval candidate: destructive (trusted hint), not gated: set approval: every_attempt to gate it
	// move_file: side effects not_idempotent (setting); server trusted; approval candidate: destructive (trusted hint), approval every_attempt
	// send_email: side effects not_idempotent (default)
	// delete_page: side effects not_idempotent (default); approval candidate: destructive (default), not gated: set approval: every_attempt to gate it
}
