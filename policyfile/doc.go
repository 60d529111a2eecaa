// Package policyfile reads the policies of a set of tools from one reviewed
// YAML file (JSON is YAML too) and wraps the agent's tools with them: which
// tool gets which retries, timeouts, circuit breaker, bulkhead, fallback,
// approval and argument schema.
//
//	file, err := policyfile.Load("policies.yaml")
//	if err != nil {
//		log.Fatal(err) // every problem, with its line
//	}
//	agentTools, err := file.WithApprover(grants).WrapAll(fetchInvoice, refund, search, archiveSearch)
//	agent := agents.NewOneShotAgent(llm, agentTools)
//
// WrapAll gives each tool the options of package toolsafe that its entry
// asks for (see File.WrapAll), so the stack of layers is toolsafe.New's;
// File.Describe prints it for a tool, and the toolsafe command
// (cmd/toolsafe) checks a file and prints it for every tool:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
//
// # The file
//
// Every field is optional. Durations are Go duration strings ("500ms",
// "2s", "1m30s"; a bare 0 is allowed); a number without a unit is an error.
// A field left out takes the value from defaults, and a default left out
// means "none": no retry, no time limit, no breaker. The one exception is
// the backoff: retries with no backoff field at all wait as
// policy.DefaultBackoff (500ms, 1s, 2s, ... up to 30s, jitter 0.25), never
// in a busy loop; write base: 0 with multiplier: 1 to retry at once.
//
//	version: 1                 # the format of this file; 1, the only one so far
//
//	defaults:                  # every tool, unless its own entry says otherwise
//	  retries: 2               # retries after the first attempt: 2 means up to 3 attempts; 0: none; at most 10
//	  timeout: 10s             # limit of each attempt, held even if the tool ignores its context; 0: none
//	  deadline: 30s            # limit of the whole call, attempts and waits included; 0: none
//	  backoff:                 # the wait before each retry: min(max, base × multiplier^(n−1)) × (1 + up to jitter); left out: 500ms..30s ×2 +25%
//	    base: 500ms            # the wait after the first failed attempt; 0: no wait
//	    max: 30s               # cap of a wait before jitter (a wait can reach max × (1+jitter)); 0: no cap
//	    multiplier: 2          # growth from one wait to the next; 0 or 1: constant
//	    jitter: 0.25           # in [0, 1]: the largest fraction added at random (0.25: 1s becomes 1s..1.25s)
//	  tracing: false           # true: spans and metrics per call and attempt (otelhook, global OTel providers)
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
//	      window: 10           # ... among the last `window` attempts; 0: failures (that many in a row)
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
// Parse, Load and LoadFS report, all in one pass and each with its line and
// column: unknown fields (with the field meant, when the typo is close),
// values of the wrong type, negative counts and durations, more than
// MaxRetries retries, a jitter or retry budget outside [0, 1], a backoff max
// shorter than its base, an attempt timeout longer than the deadline, a
// breaker window smaller than its failures, a max_wait without concurrency,
// an unknown dependency, an unknown failure kind or one that never falls
// back (approval-required, approval-denied, args-invalid, canceled), a
// fallback cycle (a → b → a), two tools whose names differ only in case
// (langchaingo's executor looks tools up by their upper-cased name), and an
// args_schema that is not a valid JSON Schema. The problems are an *Error,
// each a *Problem.
//
// WrapAll adds the problems of binding the file to tools: a tool named in
// the file but not passed, a fallback to a tool not passed, a nil tool, two
// tools whose names collide (toolsafe.Tools.Check), a tool that needs
// approval with no approver, a dependency with shared: redis and no store.
// CheckTools checks the file against a list of names the same way, without
// wrapping anything (but for the approver and the store, which only code
// gives). A dependency with shared: redis but neither a breaker nor a
// retry_budget is a problem of the file itself.
//
// # Limits
//
// A file larger than MaxSize (1 MiB), nested deeper than MaxDepth (32), or
// with more than MaxEntries keys in a mapping written one key a line, is
// refused before it is parsed, with one problem that names the limit; so
// is one with too many empty values ("key:" with nothing after it: write ~)
// for its length, or more than 8 document markers (---). The YAML parser
// takes time and memory that grow with the square of the nesting, of the
// keys of one block mapping and of the empty values, and recurses once per
// level, key and document: without the limits, 200 KB of nested brackets
// took 15 GB and a large flat file overflowed the stack. Within them, the
// worst file found parses in under a second, and a realistic one of 500
// tools in a few milliseconds (BenchmarkParse). Aliases are followed at most
// 10000 times, and at most 1048576 values are visited through them, so an
// alias cannot make a small file large.
//
// # What comes from code
//
// The file says which tool needs approval; the approval.Approver that
// decides comes from code, with File.WithApprover. So does the store of the
// dependencies a fleet shares (shared: redis): File.WithShared with a
// *redisstore.Store, whose Redis address comes from the program's
// configuration (REDIS_ADDR in the examples), never from the file. So do a
// fallback's input adapter (File.WithFallbackOptions with
// fallback.WithInput), and any option for every tool, such as a logger or
// a tracer of your own (File.With).
package policyfile
