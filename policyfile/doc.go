// Package policyfile reads the policies of a set of tools from one reviewed
// YAML file (JSON is YAML too) and wraps the agent's tools with them: which
// tool gets which retries, timeouts, circuit breaker, bulkhead, fallback,
// approval and argument schema. The file's reference, every field with its
// unit and what 0 means, is below (The file); Example (Anchors) shows how
// entries share settings.
//
//	file, err := policyfile.Load("policies.yaml")
//	if err != nil {
//		log.Fatal(err) // every problem, with its line
//	}
//	agentTools, err := file.WithApprover(grants).WrapAll(fetchInvoice, refundTool, search, archiveSearch)
//	agent := agents.NewOneShotAgent(llm, agentTools)
//
// # The file
//
// Every field is optional. Durations are Go duration strings ("500ms",
// "2s", "1m30s"; a bare 0 is allowed); a number without a unit is an
// error. A field left out takes the value from defaults, and a default left
// out means "none": no retry, no time limit, no breaker, no tracing. The one
// exception is the backoff: retries with no backoff field at all are
// delayed as policy.DefaultBackoff (500ms, 1s, 2s, ... up to 30s, jitter
// 0.25), never in a busy loop; write base: 0 with multiplier: 1 to retry at
// once. Every unknown field is an error, so a typo like "timout" is caught.
// This file sets every field:
//
//	version: 1                 # the format of this file; 1, the only one so far
//
//	defaults:                  # every tool, unless its own entry says otherwise
//	  retries: 2               # retries after the first attempt: 2 means up to 3 attempts; 0: none; at most 10
//	  timeout: 10s             # limit of each attempt, held even if the tool ignores its context; 0: none
//	  deadline: 30s            # limit of the whole call, attempts and the delays between them included; 0: none
//	  backoff:                 # the delay before each retry: min(max, base × multiplier^(n−1)) × (1 + up to jitter); left out: 500ms..30s ×2 +25%
//	    base: 500ms            # the delay after the first failed attempt; 0: no delay
//	    max: 30s               # cap of a delay before jitter (a delay can reach max × (1+jitter)); 0: no cap
//	    multiplier: 2          # growth from one delay to the next; 0 or 1: constant
//	    jitter: 0.25           # in [0, 1]: the largest fraction added at random (0.25: 1s becomes 1s..1.25s)
//	  tracing: false           # true: spans and metrics per call and attempt (otelhook, global OTel providers,
//	                           # or the Hook given with File.WithTracing); false (the default): none
//	  calls:                   # the loop guard, per agent run scoped with run.With; left out: no limit
//	    identical: 3           # the most calls with the same input (the same JSON)
//	    per_tool: 10           # the most calls of the tool, whatever the input
//	    total: 50              # the most calls of all tools, counted when this tool is called
//	    repeats: refuse        # refuse (the default): no identical call after one that failed for good; allow
//
//	dependencies:              # upstream services; the tools of one share its breaker, bulkhead and budget
//	  billing:
//	    breaker:               # circuit breaker; left out: none; {} gives the values that 0 means
//	      failures: 5          # failed attempts (transient or timed out) that open it ...; 0: 5
//	      window: 10           # ... among the last window attempts; 0: failures (that many in a row)
//	      delay: 30s           # how long it stays open before letting probes through; 0: 30s
//	      probes: 1            # attempts let through while half-open; all must succeed to close it; 0: 1
//	    concurrency: 8         # bulkhead: attempts in flight at once, over all its tools; 0: no bulkhead
//	    max_wait: 1s           # how long an attempt waits for a free slot before tool-busy; 0: not at all
//	    retry_budget: 0.2      # in [0, 1]: most share of in-flight attempts that may be retries (3 always may); 0: none
//	    shared: redis          # the breaker's state and the budget's counts shared by every replica of a fleet,
//	                           # through the store given with File.WithShared (package redisstore); the budget
//	                           # then caps retries at that share of the fleet's attempts over a sliding window;
//	                           # none (the default): this process only. The bulkhead stays per replica.
//
//	tools:                     # by the tool's Name(); a tool not named here gets the defaults
//	  fetch_invoice:
//	    dependency: billing    # a name under dependencies
//	    retries: 3             # as in defaults; so are timeout, deadline, backoff (field by field), tracing and calls
//	    timeout: 2s
//	    tracing: true          # this tool's calls are traced, whatever defaults say
//	  refund:
//	    dependency: billing
//	    side_effects: idempotent   # none (the default): safe to repeat; idempotent: it sends the call's
//	                               # idempotency key, so retries are safe; not_idempotent: no retry after
//	                               # an attempt that may have landed (timeout, reset); the model is told to check
//	    approval: every_attempt    # none (the default); per_call: one grant per call;
//	                               # every_attempt: each attempt, retries included, needs its own grant;
//	                               # the approver comes from code (File.WithApprover)
//	    approvers: [finance]       # the groups whose members may decide its calls in the inbox
//	                               # (File.Approvers, inbox.Approvers with the program's inbox.Groups)
//	    approvals: 2               # how many different people must approve the same request
//	                               # (File.Quorum, approval.Grants.Quorum); 1 (the default): one
//	  search:
//	    fallback:                  # or just fallback: archive_search
//	      tool: archive_search     # another of the agent's tools, wrapped by its own policies
//	      on: [tool-failed, circuit-open]  # the failure kinds that route to it; left out: tool-failed,
//	                                       # tool-timeout, circuit-open and tool-error
//	    args_schema:               # JSON Schema of the tool's input, a JSON object; see package argschema
//	      type: object
//	      required: [query]
//	      properties: {query: {type: string, minLength: 1}}
//
//	mcp_servers:               # MCP servers, by the program's name for each (mcptools.WithServerName)
//	  files:
//	    trusted: true          # its tool annotations loosen too: read-only tools are retried freely,
//	                           # idempotent ones after an unknown outcome; false (the default): they only
//	                           # tighten, and every tool of the server has side effects without a key
//
// Its tools get, outermost layer first (File.Describe, toolsafe describe):
//
//	fetch_invoice: trace → surface → loop guard (identical 3, per tool 10, total 50) → deadline 30s → retry 3 (500ms..30s ×2 +25%; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → bulkhead billing(8, wait 1s) → timeout 2s → tool fetch_invoice
//	refund: surface → loop guard (identical 3, per tool 10, total 50) → deadline 30s → retry 2 (500ms..30s ×2 +25%; budget billing 20% (shared: redis); same idempotency key) → approval every attempt → breaker billing (shared: redis) → bulkhead billing(8, wait 1s) → timeout 10s → tool refund
//	search: surface → args schema → loop guard (identical 3, per tool 10, total 50) → fallback(archive_search on tool-failed, circuit-open) → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search
//
// Anchors, aliases and merge keys (<<: *billing_tool) work as YAML defines
// them; top-level fields whose names begin with "x-" are ignored, a place
// to define anchors (Example (Anchors)).
//
// # Problems
//
// Parse, Load and LoadFS check the whole file in one pass and return an
// *Error that lists every problem, each a *Problem with its line, column
// and field: unknown fields (with the one meant), values of the wrong type
// or out of range, settings that contradict each other, unknown
// dependencies, fallback cycles, invalid JSON Schemas. WrapAll and
// CheckTools add the problems of binding the file to tools, such as a tool
// named but not passed. File.Describe prints the layers a tool gets,
// outermost first, as toolsafe.New stacks them; the toolsafe command checks
// a file and prints them for every tool, or for the tools named:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest describe policies.yaml refund
//
// What a file must not hold comes from code: the approver (File.WithApprover),
// the store a fleet shares (File.WithShared), a fallback's input adapter
// (File.WithFallbackOptions) and options for every tool (File.With).
//
// # Limits
//
// A file larger than MaxSize (1 MiB), nested deeper than MaxDepth (32), with
// more than MaxEntries (5000) keys in a mapping written one key a line, with
// too many empty values for its length ("key:" with nothing after it; write
// ~), or with more than 8 document markers (---) is refused before it is
// parsed, with one problem that names the limit: the YAML parser's time and
// memory grow with the square of these. Aliases are followed at most 10000
// times, and expand to 1048576 values at most. Within the limits, the worst
// file found parses in under a second, and one of 500 tools in milliseconds.
package policyfile
