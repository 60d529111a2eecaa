package policyfile_test

import (
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/policyfile"
)

// The files of the size and depth tests and of BenchmarkParse, generated
// rather than checked in.

// realistic is a policies file of n tools over n/25 dependencies, every
// other one with an args schema, every tenth with a fallback, in block
// style.
func realistic(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\ndefaults:\n  retries: 2\n  timeout: 10s\n  deadline: 30s\n  backoff: {base: 500ms, max: 30s, multiplier: 2, jitter: 0.25}\n")
	deps := max(n/25, 1)
	b.WriteString("dependencies:\n")
	for i := range deps {
		fmt.Fprintf(&b, "  dep_%d:\n    breaker: {failures: 5, window: 10, delay: 30s, probes: 1}\n    concurrency: 8\n    max_wait: 1s\n    retry_budget: 0.2\n", i)
	}
	b.WriteString("tools:\n")
	for i := range n {
		fmt.Fprintf(&b, "  tool_%d:\n    dependency: dep_%d\n    retries: 3\n    timeout: 2s\n", i, i%deps)
		if i%10 == 1 {
			fmt.Fprintf(&b, "    fallback: {tool: tool_%d, on: [tool-failed, circuit-open]}\n", i-1)
		}
		if i%2 == 0 {
			b.WriteString("    side_effects: idempotent\n    args_schema:\n      type: object\n      required: [number]\n      additionalProperties: false\n      properties:\n        number: {type: string, pattern: \"^INV-[0-9]+$\"}\n        limit: {type: integer, minimum: 1, maximum: 50}\n")
		}
	}
	return b.String()
}

// fill repeats unit, numbered by %d, after head until the file is within
// room bytes of MaxSize, and ends it with tail.
func fill(head, unit, tail string, room int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		u := strings.ReplaceAll(unit, "%d", fmt.Sprint(i))
		if b.Len()+len(u)+len(tail)+room > policyfile.MaxSize {
			break
		}
		b.WriteString(u)
	}
	b.WriteString(tail)
	return b.String()
}

// blockMappings is m block mappings of k keys each, at the top of the file.
func blockMappings(m, k int) string {
	var b strings.Builder
	for i := range m {
		fmt.Fprintf(&b, "x-m%d:\n", i)
		for j := range k {
			fmt.Fprintf(&b, " %d: 1\n", j)
		}
	}
	return b.String()
}

// nested is n mappings inside each other by indentation, under x-deep.
func nested(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "x-deep:\n")
	}
	return b.String()
}

// The shapes near the limits that the parser must still read fast: each is
// accepted, and near MaxSize.
var nearLimits = []struct {
	name string
	yaml func() string
}{
	{"one block mapping of MaxEntries keys", func() string { return blockMappings(1, policyfile.MaxEntries) }},
	{"two block mappings of MaxEntries-1 keys", func() string { return blockMappings(2, policyfile.MaxEntries-1) }},
	{"49 block mappings of MaxEntries/5 keys", func() string { return blockMappings(49, policyfile.MaxEntries/5) }},
	{"a MiB of block mappings of 200 keys", func() string { return blockMappings(700, 200) }},
	{"one flow mapping of a MiB", func() string { return fill("x-m: {", "k%d: v, ", "z: v}\n", 0) }},
	{"one flow list of a MiB", func() string { return fill("x-l: [", "a, ", "a]\n", 0) }},
	{"one block list of a MiB", func() string { return fill("x-l:\n", "- a\n", "", 0) }},
	{"flow lists nested to the limit, again and again", func() string {
		deep := strings.Repeat("[", policyfile.MaxDepth-2) + strings.Repeat("]", policyfile.MaxDepth-2)
		return fill("x-l:\n", "- "+deep+"\n", "", 0)
	}},
	{"block mappings nested to the limit, again and again", func() string {
		unit := "- k:\n"
		for i := 3; i <= policyfile.MaxDepth; i++ {
			unit += strings.Repeat(" ", i) + "k:\n"
		}
		return fill("x-l:\n", unit, "", 0)
	}},
	{"compact lists nested to the limit, again and again", func() string {
		return fill("x-l:\n", strings.Repeat("- ", policyfile.MaxDepth-1)+"a\n", "", 0)
	}},
	{"anchors and their aliases", func() string {
		return fill("x-a: &a {retries: 1}\nx-l: [", "&b%d {c: *a}, *b%d, ", "*a]\n", 0)
	}},
	{"a block of text of a MiB", func() string { return fill("x-t: |\n", "  a line of text [{\"'\n", "", 0) }},
	{"comments of a MiB", func() string { return fill("", "# a comment [[[[ {{{{ \"'\n", "tools: {}\n", 0) }},
	{"a single-quoted string of a MiB", func() string { return fill("x-s: '", "it''s [", "'\n", 0) }},
}
