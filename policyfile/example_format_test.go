package policyfile_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

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
