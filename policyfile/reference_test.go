package policyfile

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// docBlocks returns the code blocks of the package doc in doc.go that
// follow the line holding after, as go doc prints them: tab-indented lines,
// blank lines inside a block kept.
func docBlocks(t *testing.T, after string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		t.Fatalf("doc.go: %v", err)
	}
	_, text, ok := strings.Cut(f.Doc.Text(), after)
	if !ok {
		t.Fatalf("the package doc has no %q", after)
	}
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.TrimRight(strings.Join(cur, "\n"), "\n")+"\n")
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "\t"):
			cur = append(cur, strings.TrimPrefix(line, "\t"))
		case line == "" && len(cur) > 0:
			cur = append(cur, "")
		default:
			flush()
		}
	}
	flush()
	return blocks
}

// Issue 31, item 5: go doc on this package, which the README calls the
// full reference of the file, printed no field of the file (they lived in
// a test's Example). The package doc holds the reference now: a file that
// parses, sets every field the decoder knows (tracing: true among them),
// and gets the chains the doc says it gets.
func TestThePackageDocIsTheFilesReference(t *testing.T) {
	blocks := docBlocks(t, "# The file")
	if len(blocks) < 2 {
		t.Fatalf("the section The file has %d code blocks; want the file and its chains", len(blocks))
	}
	ref, chains := blocks[0], blocks[1]
	file, err := Parse([]byte(ref))
	if err != nil {
		t.Fatalf("the reference does not parse: %v\n%s", err, ref)
	}
	fields := slices.Concat(topFields, policyFields, backoffFields, callsFields, depFields, breakerFields, toolOnly, fallbackKeys, mcpServerFields)
	for _, f := range fields {
		if !strings.Contains(ref, " "+f+":") && !strings.HasPrefix(ref, f+":") && !strings.Contains(ref, "\n"+f+":") {
			t.Errorf("the reference does not set %s", f)
		}
	}
	if !strings.Contains(ref, "tracing: true") {
		t.Error("the reference does not show tracing: true")
	}
	var got strings.Builder
	for _, name := range file.Tools() {
		got.WriteString(name + ": " + file.Describe(name) + "\n")
	}
	if got.String() != chains {
		t.Errorf("the doc says its tools get:\n%s\nFile.Describe says:\n%s", chains, got.String())
	}
}
