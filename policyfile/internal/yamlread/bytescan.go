package yamlread

// scanBytes checks the raw bytes of a file against MaxSize and MaxDepth,
// before anything else reads them, in one pass that allocates almost
// nothing. It counts the flow brackets ([ and {) outside quotes and
// comments, and the block levels: the indentation of each key, and a level
// at each "- " or "? ", several on one line being nested. It errs on the
// side of counting, and it is not a YAML parser: scanTokens then holds the
// lexer's tokens, which are what the parser reads, to the same limits
// exactly.
func scanBytes(data []byte) *Problem {
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

// line scans one line (without its newline), the line-th of the file.
func (s *byteScan) line(b []byte, line int) *Problem {
	indent := 0
	for indent < len(b) && b[indent] == ' ' {
		indent++
	}
	if s.skips(b, indent) {
		return nil
	}
	i, key := indent, -1 // key: the column a key on this line would have
	if s.flow == 0 {
		var p *Problem
		if i, p = s.indicators(b, indent, line); p != nil {
			return p
		}
		key = i
	}
	return s.rest(b, i, key, indent, line)
}

// skips reports whether the line b, indented by indent, holds nothing to
// scan: it is text of the block scalar being skipped, or blank or a
// comment outside flow collections. A line that is neither ends the block
// scalar.
func (s *byteScan) skips(b []byte, indent int) bool {
	blank := indent == len(b) || b[indent] == '\r' || b[indent] == '#'
	if s.inScalar {
		if blank || indent > s.parent {
			return true // the text of a block scalar
		}
		s.inScalar = false
	}
	return blank && s.flow == 0
}

// indicators scans the start of a line in block context, from its indent:
// a document marker, which closes every block level, then the "- " and
// "? " that open a level each ("- - - a" and "? ? a" nest). It returns the
// index after them, where a key would start.
func (s *byteScan) indicators(b []byte, indent, line int) (int, *Problem) {
	s.tokenStart = true
	i := indent
	if indent == 0 && isMarker(b) {
		s.levels = s.levels[:0]
		i = 3
	}
	for i < len(b) && (b[i] == '-' || b[i] == '?') && (i+1 == len(b) || isSpace(b[i+1])) {
		if p := s.entry(i, line); p != nil {
			return i, p
		}
		for i++; i < len(b) && isSpace(b[i]); i++ {
		}
	}
	return i, nil
}

// rest scans the line b from index i to its end: quotes, brackets, keys,
// comments, block scalar headers, anchors and tags. key is the column a key
// at the start of the line would have, -1 if none can be there; indent is
// the line's indentation.
func (s *byteScan) rest(b []byte, i, key, indent, line int) *Problem {
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
		case (c == ',' || c == ':') && s.flow > 0:
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
