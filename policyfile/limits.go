package policyfile

import (
	"fmt"
	"io"

	"github.com/goccy/go-yaml/token"
)

// The limits of a policies file. A file past one is refused with a problem
// that names the limit, before the YAML parser (goccy/go-yaml) sees it: its
// time and memory grow with the square of the nesting, of the keys of one
// block mapping and of the empty values, and it recurses once per level,
// per key and per document, so a file of a few hundred kilobytes could take
// gigabytes, minutes, or the whole stack. Within the limits, the worst file
// found parses in under a second (BenchmarkParse measures it).
const (
	// MaxSize is the largest policies file, in bytes: 1 MiB. A file of 500
	// tools over 20 dependencies, half of them with a schema, takes about
	// 100 KiB.
	MaxSize = 1 << 20

	// MaxDepth is the deepest a policies file may nest: mappings and lists
	// inside each other, by indentation or by brackets, aliases followed.
	// A tool's fields are at level 3, the properties of its args_schema at
	// 5: 32 leaves room for deep JSON Schemas.
	MaxDepth = 32

	// MaxEntries is the most keys one mapping written one key a line (a
	// block mapping, such as tools:) may hold: 5000 tools, or fields. The
	// parser's time grows with the square of a block mapping's keys, so
	// the squares of the numbers of keys of all of them may add up to
	// 2×MaxEntries² at most: two mappings of 5000 keys, or 50 of 1000. A
	// mapping in flow style ({a: 1, b: 2}) is not counted: the parser is
	// linear there.
	MaxEntries = 5000

	// MaxRetries is the most retries a policies file allows, in defaults or
	// a tool: 10 retries, 11 attempts. Past a few retries a failing
	// upstream only gets more load; a longer wait comes from the backoff
	// and the deadline, not from more attempts. Code may ask for more with
	// toolsafe.WithRetry.
	MaxRetries = 10
)

// maxMarkers is the most document markers (---) a file may hold. A
// policies file is one document; more than one that holds anything is a
// problem of its own, and empty ones have no reason to be there.
const maxMarkers = 8

// readFile reads r up to one byte past MaxSize, so that a larger file is
// refused by its size without being read whole.
func readFile(r io.Reader) ([]byte, error) {
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

// scanLimits checks the raw bytes of a file against MaxSize and MaxDepth,
// before anything else reads them, in one pass that allocates almost
// nothing. It counts the flow brackets ([ and {) outside quotes and
// comments, and the block levels: the indentation of each key, and a level
// at each "- " or "? ", several on one line being nested. It errs on the
// side of counting, and it is not a YAML parser: tokenLimits then holds the
// lexer's tokens, which are what the parser reads, to the same limits
// exactly.
func scanLimits(data []byte) *Problem {
	if len(data) > MaxSize {
		return tooLarge()
	}
	var s byteScan
	line := 0
	for start := 0; start < len(data); {
		end := start
		for end < len(data) && data[end] != '\n' {
			end++
		}
		line++
		if p := s.line(data[start:end], line); p != nil {
			return p
		}
		start = end + 1
	}
	return nil
}

type byteScan struct {
	levels []int // the columns (0-based) of the open block levels
	flow   int   // the open flow brackets

	// The block scalar (| or >) being skipped: its header's line was
	// indented by parent; the lines indented more, and blank ones, are its
	// text.
	inScalar bool
	parent   int

	// tokenStart is whether the next character starts a token: a quote or
	// a bracket there opens a quoted scalar or a flow collection. Inside a
	// flow collection it carries over from one line to the next.
	tokenStart bool
}

// entry opens or continues the block level of an entry (a key, a "- ") at
// column col of line; it returns the problem of a level past MaxDepth.
func (s *byteScan) entry(col, line int) *Problem {
	for len(s.levels) > 0 && s.levels[len(s.levels)-1] > col {
		s.levels = s.levels[:len(s.levels)-1]
	}
	if len(s.levels) == 0 || s.levels[len(s.levels)-1] < col {
		s.levels = append(s.levels, col)
	}
	if len(s.levels)+s.flow > MaxDepth {
		return tooDeep(line, col+1)
	}
	return nil
}

// line scans one line (without its newline), the line-th of the file.
func (s *byteScan) line(b []byte, line int) *Problem {
	indent := 0
	for indent < len(b) && b[indent] == ' ' {
		indent++
	}
	blank := indent == len(b) || b[indent] == '\r' || b[indent] == '#'
	if s.inScalar {
		if blank || indent > s.parent {
			return nil // the text of a block scalar
		}
		s.inScalar = false
	}
	if blank && s.flow == 0 {
		return nil
	}
	i, key := indent, -1 // key: the column a key on this line would have
	if s.flow == 0 {
		s.tokenStart = true
		if indent == 0 && isMarker(b) {
			s.levels = s.levels[:0]
			i = 3
		}
		key = i
		// "- - - a" and "? ? a" nest a level at each indicator.
		for i < len(b) && (b[i] == '-' || b[i] == '?') && (i+1 == len(b) || isSpace(b[i+1])) {
			if p := s.entry(i, line); p != nil {
				return p
			}
			for i++; i < len(b) && isSpace(b[i]); i++ {
			}
			key = i
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '#' && (i == 0 || isSpace(b[i-1])):
			return nil // a comment
		case (c == '"' || c == '\'') && s.tokenStart:
			// A quoted scalar: skip to its end, or to the end of the line (a
			// quote that goes on is read as plain text on the next lines,
			// which counts more brackets, never fewer).
			i = skipQuote(b, i)
			s.tokenStart = false
		case (c == '[' || c == '{') && (s.tokenStart || s.flow > 0):
			s.flow++
			s.tokenStart = true
			if len(s.levels)+s.flow > MaxDepth {
				return tooDeep(line, i+1)
			}
		case (c == ']' || c == '}') && s.flow > 0:
			s.flow--
			s.tokenStart = false
		case c == ',' && s.flow > 0:
			s.tokenStart = true
		case c == ':' && s.flow > 0:
			s.tokenStart = true
		case c == ':' && (i+1 == len(b) || isSpace(b[i+1]) || b[i+1] == '\r'):
			// A key in a block mapping: its level is where the line's entry
			// starts.
			if key >= 0 {
				if p := s.entry(key, line); p != nil {
					return p
				}
				key = -1
			}
			s.tokenStart = true
		case (c == '|' || c == '>') && s.tokenStart && s.flow == 0 && isScalarHeader(b[i+1:]):
			s.inScalar, s.parent = true, indent
			return nil
		case (c == '&' || c == '!') && s.tokenStart:
			// An anchor or a tag before the value: the value starts after it.
			for i+1 < len(b) && !isSpace(b[i+1]) {
				i++
			}
		case isSpace(c) || c == '\r':
		default:
			s.tokenStart = false
		}
	}
	return nil
}

// skipQuote returns the index of the quote that closes the quoted scalar
// opening at b[i], or the last index of b when it does not close on this
// line.
func skipQuote(b []byte, i int) int {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch {
		case q == '"' && b[j] == '\\':
			j++ // an escaped character
		case b[j] == q && q == '\'' && j+1 < len(b) && b[j+1] == '\'':
			j++ // '' is a quote inside single quotes
		case b[j] == q:
			return j
		}
	}
	return len(b) - 1
}

// isScalarHeader reports whether rest, what follows a | or >, makes it the
// header of a block scalar: chomping and indentation indicators, then
// nothing but spaces or a comment.
func isScalarHeader(rest []byte) bool {
	i := 0
	for i < len(rest) && (rest[i] == '-' || rest[i] == '+' || ('1' <= rest[i] && rest[i] <= '9')) {
		i++
	}
	for i < len(rest) && (isSpace(rest[i]) || rest[i] == '\r') {
		i++
	}
	return i == len(rest) || rest[i] == '#' && (i == 0 || isSpace(rest[i-1]))
}

// isMarker reports whether the line b is a document marker: --- or ...
// alone or followed by a space.
func isMarker(b []byte) bool {
	if len(b) < 3 || (string(b[:3]) != "---" && string(b[:3]) != "...") {
		return false
	}
	return len(b) == 3 || isSpace(b[3]) || b[3] == '\r'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// maxNullWork bounds the work of the YAML parser on empty values: for each
// "key:" or "-" with nothing after it, it inserts a null token into the
// tokens that follow, in time linear in them. The sum, over the empty
// values, of the tokens after each may not pass 2^28: about 500 empty
// values at the top of a file of a MiB, 5000 in one of 100 KiB, any number
// written as ~, null or {}.
const maxNullWork = 1 << 28

func tooManyNulls(line, col int) *Problem {
	return &Problem{Line: line, Column: col,
		Message: "the file has too many empty values (a key or a - with nothing after it) for its length by here: the YAML parser's time grows with their number times the length of the file after them; write ~ (or null, or {}) for each"}
}

// tokenLimits holds the tokens of goccy/go-yaml's lexer, which its parser
// reads, to MaxDepth, MaxEntries, maxNullWork and the document markers:
// the flow brackets the lexer found, the block levels by the columns of the
// tokens that begin an entry ("-", "?", a key before ":"), the keys of each
// block level, the empty values. The lexer itself takes time and memory
// linear in the size of the file.
func tokenLimits(all token.Tokens) *Problem {
	tokens := make([]*token.Token, 0, len(all))
	for _, tk := range all {
		if tk.Type != token.CommentType && tk.Position != nil {
			tokens = append(tokens, tk)
		}
	}
	type level struct{ col, keys int }
	var levels []level
	var flows []bool // the open flow collections, true for a mapping
	markers := 0
	squares := 0  // the sum of the squares of the keys of the block mappings so far
	nullWork := 0 // the tokens after each empty value so far, summed
	for i, tk := range tokens {
		line, col := tk.Position.Line, tk.Position.Column
		var prev, next *token.Token
		if i > 0 {
			prev = tokens[i-1]
		}
		if i+1 < len(tokens) {
			next = tokens[i+1]
		}
		// entry opens or continues the block level of an entry at column
		// c; key says whether the entry is a key of a mapping.
		entry := func(c int, key bool) *Problem {
			for len(levels) > 0 && levels[len(levels)-1].col > c {
				levels = levels[:len(levels)-1]
			}
			if len(levels) == 0 || levels[len(levels)-1].col < c {
				levels = append(levels, level{col: c})
			}
			if key {
				k := &levels[len(levels)-1].keys
				*k++
				squares += 2**k - 1 // k² − (k−1)²
				if *k > MaxEntries {
					return tooManyEntries(line, c)
				}
				if squares > 2*MaxEntries*MaxEntries {
					return tooManyKeys(line, c)
				}
			}
			if len(levels)+len(flows) > MaxDepth {
				return tooDeep(line, c)
			}
			return nil
		}
		// empty reports whether the entry at column c (of a key or a "-")
		// on this line has no value: the next token is on a later
		// line, and not indented more (a list at the key's column is the
		// key's value).
		empty := func(c int) bool {
			return next != nil && next.Position.Line > line &&
				(next.Position.Column < c || next.Position.Column == c && !(tk.Type == token.MappingValueType && next.Type == token.SequenceEntryType))
		}
		isNull := false
		var p *Problem
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flows = append(flows, tk.Type == token.MappingStartType)
			if len(levels)+len(flows) > MaxDepth {
				p = tooDeep(line, col)
			}
		case token.SequenceEndType, token.MappingEndType:
			if len(flows) > 0 {
				flows = flows[:len(flows)-1]
			}
		case token.DocumentHeaderType:
			levels = levels[:0]
			if markers++; markers > maxMarkers {
				p = tooManyMarkers(line, col)
			}
		case token.SequenceEntryType:
			if len(flows) == 0 {
				p = entry(col, false)
				isNull = empty(col)
			}
		case token.MappingKeyType:
			// "? a" is a key whose value is null unless a ":" follows;
			// count it as one.
			isNull = true
			if len(flows) == 0 {
				p = entry(col, true)
			}
		case token.MappingValueType:
			switch {
			case len(flows) > 0:
				isNull = next == nil || isFlowDelim(next)
			case prev != nil && prev.Type != token.MappingKeyType:
				p = entry(prev.Position.Column, true)
				isNull = empty(prev.Position.Column)
			}
		default:
			// A key with no ":" in a flow mapping, as in {a, b}.
			isNull = len(flows) > 0 && flows[len(flows)-1] && prev != nil &&
				(prev.Type == token.MappingStartType || prev.Type == token.CollectEntryType) && next != nil && isFlowDelim(next)
		}
		if p != nil {
			return p
		}
		if isNull {
			if nullWork += len(tokens) - i; nullWork > maxNullWork {
				return tooManyNulls(line, col)
			}
		}
	}
	return nil
}

// isFlowDelim reports whether tk ends an entry of a flow collection.
func isFlowDelim(tk *token.Token) bool {
	return tk.Type == token.CollectEntryType || tk.Type == token.MappingEndType || tk.Type == token.SequenceEndType
}
