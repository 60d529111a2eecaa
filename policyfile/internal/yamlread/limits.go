package yamlread

import (
	"fmt"
	"io"
)

// The limits of a file; package policyfile exports them with their
// documentation.
const (
	// MaxSize is the largest file, in bytes: 1 MiB.
	MaxSize = 1 << 20
	// MaxDepth is the deepest a file may nest: mappings and lists inside
	// each other, by indentation or by brackets, aliases followed.
	MaxDepth = 32
	// MaxEntries is the most keys of one block mapping; the squares of the
	// numbers of keys of all block mappings may add up to 2×MaxEntries².
	MaxEntries = 5000
)

// maxMarkers is the most document markers (---) a file may hold. A
// policies file is one document; more than one that holds anything is a
// problem of its own, and empty ones have no reason to be there.
const maxMarkers = 8

// maxNullWork bounds the work of the YAML parser on empty values: for each
// "key:" or "-" with nothing after it, it inserts a null token into the
// tokens that follow, in time linear in them. The sum, over the empty
// values, of the tokens after each may not pass 2^28: about 500 empty
// values at the top of a file of a MiB, 5000 in one of 100 KiB, any number
// written as ~, null or {}.
const maxNullWork = 1 << 28

const (
	// maxAliasUses bounds how many times aliases are followed, so that a
	// file cannot expand exponentially ("billion laughs").
	maxAliasUses = 10000
	// maxValues bounds the values a Reader visits, aliases followed, so
	// that a few aliases of one large anchor cannot expand either.
	maxValues = 1 << 20
)

// Problem is why a file was refused before or while it was parsed: a limit
// it is past, or its syntax. Line and Column are 1-based; 0 when the
// problem has no place (a file past MaxSize).
type Problem struct {
	Line, Column int
	Message      string
}

// ReadAll reads r up to one byte past MaxSize, so that a larger file is
// refused by its size without being read whole.
func ReadAll(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxSize+1))
}

func tooLarge() *Problem {
	return &Problem{Message: fmt.Sprintf("the file holds more than %d bytes (1 MiB), the most a policies file may: keep the policies of unrelated agents in files of their own", MaxSize)}
}

func tooDeep(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: fmt.Sprintf("the file nests deeper than %d levels here, the most a policies file may: flatten it (anchors and aliases can share a setting instead)", MaxDepth)}
}

func tooManyEntries(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: fmt.Sprintf("the mapping here has more than %d keys, the most a policies file allows in one mapping written one key a line: split the file, or write the mapping in flow style ({a: ..., b: ...})", MaxEntries)}
}

func tooManyKeys(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: fmt.Sprintf("the mappings written one key a line hold too many keys by here: the squares of their numbers of keys add up to more than 2×%d² (the YAML parser's time grows with them), the most a policies file allows; split the file, or write the large mappings in flow style ({a: ..., b: ...})", MaxEntries)}
}

func tooManyMarkers(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: fmt.Sprintf("the file has more than %d document markers (---): a policies file is one YAML document", maxMarkers)}
}

func tooManyNulls(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: "the file has too many empty values (a key or a - with nothing after it) for its length by here: the YAML parser's time grows with their number times the length of the file after them; write ~ (or null, or {}) for each"}
}
