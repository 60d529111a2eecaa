package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Issue 31, item 5: the README's MCP snippet used wrapped, which it never
// declared, and no test compiled the README's code. Every ```go block of
// README.md compiles, completed by the code around it, in one module
// beside every published module.
func TestEveryGoBlockOfTheREADMECompiles(t *testing.T) {
	if err := checkREADME("../.."); err != nil {
		t.Fatal(err)
	}
}

func TestAGoBlockWithoutItsMarkerOrNameIsAProblem(t *testing.T) {
	readme := "# x\n\n```go\na := 1\n```\n\n<!-- go: one -->\n```go\nb := 2\n```\n\n<!-- go: one -->\n```go\nc := 3\n```\n\n<!-- go: lost -->\ntext\n"
	snippets, problems := readmeSnippets(readme)
	if len(snippets) != 1 || snippets[0].name != "one" || snippets[0].line != 9 || strings.Join(snippets[0].lines, "\n") != "b := 2" {
		t.Errorf("snippets %+v; want one, at line 9", snippets)
	}
	for i, want := range []string{
		"README.md:3: a ```go block with no <!-- go: NAME --> line before it",
		"README.md:13: the name one is the block's at line 8 too",
		"README.md:17: the marker <!-- go: lost --> is not followed by a ```go line",
	} {
		if i >= len(problems) || !strings.HasPrefix(problems[i], want) {
			t.Errorf("problem %d: %q; want it to start %q (all: %q)", i, problems, want, problems)
		}
	}
}

// A block's imports go to the top of its wrapper; the compiler names the
// README's lines for the block's code and the wrapper's for its own, in a
// block indented under a list item too.
func TestABlocksLinesAreTheREADMEs(t *testing.T) {
	readme := "text\n\n  <!-- go: frag -->\n  ```go\n  // a comment\n  import \"strings\"\n\n  up := strings.ToUpper(name)\n  ```\n"
	snippets, problems := readmeSnippets(readme)
	if len(problems) > 0 || len(snippets) != 1 {
		t.Fatalf("%v %v", snippets, problems)
	}
	wrapper := "package frag\n\nimport \"fmt\"\n\nfunc _(name string) {\n\t// README snippet\n\tfmt.Println(up)\n}\n"
	src, err := snippets[0].program(wrapper, "frag.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "gen.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	at := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && (id.Name == "up" || id.Name == "fmt") {
			if p := fset.Position(id.Pos()); at[id.Name] == "" {
				at[id.Name] = p.Filename + ":" + strconv.Itoa(p.Line)
			}
		}
		return true
	})
	for _, imp := range f.Imports {
		p := fset.Position(imp.Pos())
		at[imp.Path.Value] = p.Filename + ":" + strconv.Itoa(p.Line)
	}
	for name, want := range map[string]string{`"strings"`: "README.md:6", "up": "README.md:8", `"fmt"`: "frag.go:3", "fmt": "frag.go:7"} {
		if at[name] != want {
			t.Errorf("%s is at %s; want %s\n%s", name, at[name], want, src)
		}
	}
}
