package policyfile_test

import (
	"context"
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// A file with mistakes gets every problem at once, each with its line,
// column and field.
func ExampleParse() {
	_, err := policyfile.Parse([]byte(`
defaults:
  retries: -1
  backoff: {jitter: 1.5}
tools:
  fetch_invoice:
    timout: 2s
`))
	fmt.Println(err)

	var pe *policyfile.Error
	if errors.As(err, &pe) {
		p := pe.Problems[2]
		fmt.Printf("tool %s, field %s, line %d\n", p.Tool, p.Field, p.Line)
	}
	// Output:
	// toolsafe: the policies file has 3 problems:
	//   line 3, column 3: defaults.retries: retries -1 is negative: use 0 for a single attempt, 3 for up to 4 attempts
	//   line 4, column 13: defaults.backoff.jitter: jitter 1.5 is outside [0, 1]: it is the largest fraction added to a wait, 0.25 turns 1s into 1s..1.25s
	//   line 7, column 5: tools.fetch_invoice.timout: unknown field "timout"; did you mean "timeout"?
	// tool fetch_invoice, field timout, line 7
}

// Describe shows the layers a tool gets, outermost first.
func ExampleFile_Describe() {
	file, err := policyfile.Parse([]byte(`
defaults: {retries: 2, timeout: 10s, deadline: 30s,
           backoff: {base: 500ms, max: 30s, multiplier: 2, jitter: 0.25}}
tools:
  fetch_invoice: {retries: 3, timeout: 2s}
  search:
    args_schema: {type: object, required: [query]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"fetch_invoice", "search", "any_other_tool"} {
		fmt.Printf("%s: %s\n", name, file.Describe(name))
	}
	// Output:
	// fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s → tool fetch_invoice
	// search: surface → args schema → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool search
	// any_other_tool: surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s → tool any_other_tool
}

// WrapAll wraps the agent's tools by their names; a bad argument never
// reaches the tool.
func ExampleFile_WrapAll() {
	file, err := policyfile.Parse([]byte(`
tools:
  search:
    retries: 2
    args_schema:
      type: object
      required: [query]
      properties: {query: {type: string, minLength: 1}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	search := middleware.Func("search", "Searches invoices.", func(_ context.Context, input string) (string, error) {
		return "3 invoices match " + input, nil
	})
	agentTools, err := file.WrapAll(search)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, input := range []string{`{"query": ""}`, `{"query": "late"}`} {
		out, _ := agentTools[0].Call(context.Background(), input)
		fmt.Println(out)
	}
	// Output:
	// search was not called: the input is invalid: argument "query" must be at least 1 character long. Fix the input and call it again.
	// 3 invoices match {"query": "late"}
}

// Load reads a file; WrapAll wraps the agent's tools by name, with the
// approver from code, and the result goes to the agent as it is.
func ExampleLoad() {
	file, err := policyfile.Load("testdata/policies/agent.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fetch := middleware.Func("fetch_invoice", "Fetches an invoice.", func(context.Context, string) (string, error) {
		return "INV-1001: 120 EUR, paid", nil
	})
	refund := middleware.Func("refund", "Refunds an invoice.", func(context.Context, string) (string, error) {
		return "refunded", nil
	})
	grants := approval.NewGrants()
	agentTools, err := file.WithApprover(grants).WrapAll(fetch, refund)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range file.Tools() {
		fmt.Printf("%s: %s\n", name, file.Describe(name))
	}
	// agents.NewOneShotAgent(llm, agentTools) takes them as they are.
	ctx := context.Background()
	out, _ := agentTools.Lookup("fetch_invoice").Call(ctx, `{"number":"INV-1001"}`)
	fmt.Println(out)

	_, err = agentTools.Lookup("refund").Call(ctx, `{"number":"INV-1001"}`)
	var ar *approval.Required
	fmt.Println("refund paused for approval:", errors.As(err, &ar))
	grants.Grant("refund", `{"number":"INV-1001"}`)
	out, _ = agentTools.Lookup("refund").Call(ctx, `{"number":"INV-1001"}`)
	fmt.Println(out)
	// Output:
	// fetch_invoice: surface → retry 3 (500ms..30s ×2 +25%) → breaker billing → bulkhead billing(8) → timeout 2s → tool fetch_invoice
	// refund: surface → approval per call → breaker billing → bulkhead billing(8) → timeout 5s → tool refund
	// INV-1001: 120 EUR, paid
	// refund paused for approval: true
	// refunded
}

// LoadFS reads a policies file from a file system, such as one embedded
// next to the program (//go:embed policies.yaml into an embed.FS); its
// problems name the file.
func ExampleLoadFS() {
	files := fstest.MapFS{"policies.yaml": {Data: []byte("tools:\n  search: {retries: 11}\n")}}
	_, err := policyfile.LoadFS(files, "policies.yaml")
	fmt.Println(err)
	// Output:
	// toolsafe: policies.yaml has 1 problem:
	//   policies.yaml:2:12: tools.search.retries: retries 11 is more than 10, the most a policies file allows: each retry adds load to an upstream that is already failing; use at most 10, with a longer backoff if it needs time to recover
}
