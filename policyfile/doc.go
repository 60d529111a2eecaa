// Package policyfile reads the policies of a set of tools from one reviewed
// YAML file (JSON is YAML too) and wraps the agent's tools with them: which
// tool gets which retries, timeouts, circuit breaker, bulkhead, fallback,
// approval and argument schema. Example (Format) shows every field, with its
// unit and what 0 means; Example (Anchors) shows how entries share settings.
//
//	file, err := policyfile.Load("policies.yaml")
//	if err != nil {
//		log.Fatal(err) // every problem, with its line
//	}
//	agentTools, err := file.WithApprover(grants).WrapAll(fetchInvoice, refundTool, search, archiveSearch)
//	agent := agents.NewOneShotAgent(llm, agentTools)
//
// Parse, Load and LoadFS check the whole file in one pass and return an
// *Error that lists every problem, each a *Problem with its line, column
// and field: unknown fields (with the one meant), values of the wrong type
// or out of range, settings that contradict each other, unknown
// dependencies, fallback cycles, invalid JSON Schemas. WrapAll and
// CheckTools add the problems of binding the file to tools, such as a tool
// named but not passed. File.Describe prints the layers a tool gets,
// outermost first, as toolsafe.New stacks them; the toolsafe command checks
// a file and prints them for every tool:
//
//	go run github.com/toolsafe/toolsafe/cmd/toolsafe@latest check policies.yaml
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
