package policyfile

import "github.com/toolsafe/toolsafe/policyfile/internal/yamlread"

// The limits of a policies file. A file past one is refused, before it is
// parsed, with one problem that names the limit. Within them, the worst
// file found parses in under a second (BenchmarkParse measures it).
const (
	// MaxSize is the largest policies file, in bytes: 1 MiB. A file of 500
	// tools over 20 dependencies, half of them with a schema, takes about
	// 100 KiB.
	MaxSize = 1 << 20

	// MaxDepth is the deepest a policies file may nest: 32 levels of
	// mappings and lists, by indentation or by brackets, aliases followed.
	// A tool's fields are at level 3, its args_schema's properties at 5.
	MaxDepth = 32

	// MaxEntries is the most keys of one mapping written one key a line
	// (such as tools:): 5000. The squares of the numbers of keys of all such
	// mappings may add up to 2×MaxEntries² at most: two of 5000 keys, or 50
	// of 1000. A mapping in flow style ({a: 1, b: 2}) is not counted.
	MaxEntries = 5000

	// MaxRetries is the most retries a policies file allows, in defaults or
	// a tool: 10 retries, 11 attempts. Past a few retries a failing
	// upstream only gets more load. Code may ask for more with
	// toolsafe.WithRetry.
	MaxRetries = 10
)

// The engine (package yamlread) holds files to the same numbers: this does
// not compile if they differ, as a difference converted to uint overflows
// in one direction or the other.
const _ = uint(MaxSize-yamlread.MaxSize) + uint(yamlread.MaxSize-MaxSize) +
	uint(MaxDepth-yamlread.MaxDepth) + uint(yamlread.MaxDepth-MaxDepth) +
	uint(MaxEntries-yamlread.MaxEntries) + uint(yamlread.MaxEntries-MaxEntries)
