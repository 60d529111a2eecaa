package adktools_test

import (
	"os"
	"strings"
	"testing"
)

// The README says its ADK snippet is this package's Example, which runs as
// a test: it is, line for line (scripts/release compiles the README's
// copy too).
func TestTheREADMEsSnippetIsTheExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func Example() {\n")
	body, _, ok2 := strings.Cut(body, "\t// Output:\n")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no Example with an Output")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "<!-- go: adk -->\n```go\n")
	block, _, _ = strings.Cut(block, "```")
	var example []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		example = append(example, strings.TrimPrefix(l, "\t"))
	}
	if strings.TrimSpace(block) != strings.TrimSpace(strings.Join(example, "\n")) {
		t.Errorf("the README's ADK snippet is not the body of Example: copy it.\nREADME:\n%s\nExample:\n%s", block, strings.Join(example, "\n"))
	}
}
