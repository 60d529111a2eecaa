package policyfile_test

import (
	"context"
	"errors"
	"fmt"

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

	var ce *policyfile.Error
	if errors.As(err, &ce) {
		p := ce.Problems[2]
		fmt.Printf("tool %s, field %s, line %d\n", p.Tool, p.Field, p.Line)
	}
	// Output:
	// toolsafe: the toolsafe config has 3 problems:
	//   line 3, column 3: defaults.retries: retries -1 is negative: use 0 for a single attempt, 3 for up to 4 attempts
	//   line 4, column 13: defaults.backoff.jitter: jitter 1.5 is outside [0, 1]: it is the largest fraction added to a wait, 0.25 turns 1s into 1s..1.25s
	//   line 7, column 5: tools.fetch_invoice.timout: unknown field "timout"; did you mean "timeout"?
	// tool fetch_invoice, field timout, line 7
}

// Describe shows the layers a tool gets, outermost first.
func ExampleFile_Describe() {
	cfg, err := policyfile.Parse([]byte(`
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
		fmt.Printf("%s: %s\n", name, cfg.Describe(name))
	}
	// Output:
	// fetch_invoice: surface → deadline 30s → retry 3 (500ms..30s ×2 +25%) → timeout 2s
	// search: surface → args schema → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s
	// any_other_tool: surface → deadline 30s → retry 2 (500ms..30s ×2 +25%) → timeout 10s
}

// WrapAll wraps the agent's tools by their names; a bad argument never
// reaches the tool.
func ExampleFile_WrapAll() {
	cfg, err := policyfile.Parse([]byte(`
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
	agentTools, err := cfg.WrapAll(search)
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
