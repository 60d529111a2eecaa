package yamlread

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// path is a Place for tests: the keys that lead to a value, joined by dots.
type path struct {
	keys string
	at   Pos
}

func (p path) Pos() Pos       { return p.at }
func (p path) At(at Pos) path { p.at = at; return p }
func (p path) Name() string   { return p.keys[strings.LastIndex(p.keys, ".")+1:] }
func (p path) Child(k string, at Pos) path {
	if p.keys != "" {
		k = p.keys + "." + k
	}
	return path{k, at}
}

// read parses yaml and returns a Reader of its document with the fields of
// its top-level mapping, and the problems the Reader reports, each as
// "line:col path: message".
func read(t *testing.T, yaml string) (*Reader[path], map[string]Entry[path], *[]string) {
	t.Helper()
	f, p := Parse([]byte(yaml))
	if p != nil {
		t.Fatalf("Parse = %+v", p)
	}
	problems := &[]string{}
	r := NewReader(f.Docs[0].Body, func(at path, msg string) {
		*problems = append(*problems, fmt.Sprintf("%d:%d %s: %s", at.at.Line, at.at.Col, at.keys, msg))
	})
	top := map[string]Entry[path]{}
	for _, e := range r.Mapping(f.Docs[0].Body, path{}) {
		top[e.Key] = e
	}
	return r, top, problems
}

func TestMappingAppliesMergeKeysAndGivesEachFieldItsPlace(t *testing.T) {
	r, top, problems := read(t, `
base: &base {retries: 3, timeout: 2s}
tool:
  <<: *base
  timeout: 5s
`)
	var got []string
	for _, e := range r.Mapping(top["tool"].Value, top["tool"].Where) {
		got = append(got, fmt.Sprintf("%s %d:%d", e.Where.keys, e.Where.at.Line, e.Where.at.Col))
	}
	// The tool's own fields first, then the merged ones it does not set.
	if want := []string{"tool.timeout 5:3", "tool.retries 2:14"}; !slices.Equal(got, want) {
		t.Errorf("fields %v; want %v", got, want)
	}
	if len(*problems) != 0 {
		t.Errorf("problems: %v", *problems)
	}
}

func TestTheReaderReportsEachProblemAtItsPlace(t *testing.T) {
	r, top, problems := read(t, `
count: -2
big: 4294967296
wait: 2
late: -1s
flag: yes
name: [a]
alias: *nowhere
list: [1]
`)
	if _, ok := r.Count(top["count"].Value, top["count"].Where, "use 0"); ok {
		t.Error("Count of -2 is ok")
	}
	if _, ok := r.Count(top["big"].Value, top["big"].Where, ""); ok {
		t.Error("Count of 2³² is ok")
	}
	if _, ok := r.Duration(top["wait"].Value, top["wait"].Where, ""); ok {
		t.Error("Duration of 2 is ok")
	}
	if _, ok := r.Duration(top["late"].Value, top["late"].Where, "use 0"); ok {
		t.Error("Duration of -1s is ok")
	}
	if _, ok := r.Bool(top["flag"].Value, top["flag"].Where); ok {
		t.Error("Bool of yes is ok")
	}
	if _, ok := r.Text(top["name"].Value, top["name"].Where); ok {
		t.Error("Text of a list is ok")
	}
	if n := r.Deref(top["alias"].Value, top["alias"].Where); n != nil {
		t.Errorf("Deref of an alias with no anchor = %v", n)
	}
	r.Mapping(top["list"].Value, top["list"].Where)
	want := []string{
		"2:1 count: count -2 is negative: use 0",
		"3:1 big: 4294967296 is too large",
		"4:1 wait: wait 2 has no unit: write a Go duration such as 2s or 2ms",
		"5:1 late: late -1s is negative: use 0",
		"6:1 flag: must be true or false, not the text \"yes\"",
		"7:1 name: must be a name, not a list",
		"8:8 alias: alias *nowhere names no anchor defined before it (&nowhere)",
		"9:1 list: must be a mapping of fields (such as {timeout: 2s}), not a list",
	}
	if !slices.Equal(*problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(*problems, "\n"), strings.Join(want, "\n"))
	}
}

func TestTheReaderDecodesScalars(t *testing.T) {
	r, top, problems := read(t, "n: 3.0\nf: 0.25\nd: ' 1m30s '\nz: 0\nb: true\ns: |\n  text\nnull: ~\n")
	if v, ok := r.Count(top["n"].Value, top["n"].Where, ""); v != 3 || !ok {
		t.Errorf("Count(3.0) = %v, %v", v, ok)
	}
	if v, ok := r.Number(top["f"].Value, top["f"].Where); v != 0.25 || !ok {
		t.Errorf("Number(0.25) = %v, %v", v, ok)
	}
	if v, ok := r.Duration(top["d"].Value, top["d"].Where, ""); v != 90*time.Second || !ok {
		t.Errorf("Duration(' 1m30s ') = %v, %v", v, ok)
	}
	if v, ok := r.Duration(top["z"].Value, top["z"].Where, ""); v != 0 || !ok {
		t.Errorf("Duration(0) = %v, %v", v, ok)
	}
	if v, ok := r.Bool(top["b"].Value, top["b"].Where); !v || !ok {
		t.Errorf("Bool(true) = %v, %v", v, ok)
	}
	if v, ok := r.Text(top["s"].Value, top["s"].Where); v != "text" || !ok {
		t.Errorf("Text(|) = %q, %v", v, ok)
	}
	if _, ok := r.Scalar(top["null"].Value, top["null"].Where); ok {
		t.Error("Scalar(~) is ok")
	}
	if len(*problems) != 0 {
		t.Errorf("problems: %v", *problems)
	}
}

func TestDescribeNamesTheKindOfAValue(t *testing.T) {
	if got, want := Describe(&ast.StringNode{Value: strings.Repeat("é", 41)}), `the text "`+strings.Repeat("é", 40)+`…"`; got != want {
		t.Errorf("Describe = %s; want %s", got, want)
	}
	if got := Describe(nil); got != "null" {
		t.Errorf("Describe(nil) = %s", got)
	}
}
