package yamlread

import "github.com/goccy/go-yaml/token"

// scanTokens holds the tokens of goccy/go-yaml's lexer, which its parser
// reads, to MaxDepth, MaxEntries, maxNullWork and the document markers:
// the flow brackets the lexer found, the block levels by the columns of the
// tokens that begin an entry ("-", "?", a key before ":"), the keys of each
// block level, the empty values. The lexer itself takes time and memory
// linear in the size of the file.
func scanTokens(all token.Tokens) *Problem {
	s := tokenScan{tokens: make([]*token.Token, 0, len(all))}
	for _, tk := range all {
		if tk.Type != token.CommentType && tk.Position != nil {
			s.tokens = append(s.tokens, tk)
		}
	}
	for i, tk := range s.tokens {
		isNull, p := s.token(i)
		if p != nil {
			return p
		}
		if isNull {
			if s.nullWork += len(s.tokens) - i; s.nullWork > maxNullWork {
				return tooManyNulls(tk.Position.Line, tk.Position.Column)
			}
		}
	}
	return nil
}

type tokenScan struct {
	tokens   []*token.Token // the lexer's, but comments
	levels   []level        // the open block levels
	flows    []bool         // the open flow collections, true for a mapping
	markers  int            // the document markers so far
	squares  int            // the sum of the squares of the keys of the block mappings so far
	nullWork int            // the tokens after each empty value so far, summed
}

// level is an open block level: its column, and its keys so far.
type level struct{ col, keys int }

// token holds the i-th token to the limits, and reports whether it is an
// empty value: a "-", "?" or ":" with nothing after it, or a key with no
// ":" in a flow mapping.
func (s *tokenScan) token(i int) (isNull bool, p *Problem) {
	tk, prev, next := s.tokens[i], s.at(i-1), s.at(i+1)
	line, col := tk.Position.Line, tk.Position.Column
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		s.flows = append(s.flows, tk.Type == token.MappingStartType)
		if len(s.levels)+len(s.flows) > MaxDepth {
			return false, tooDeep(line, col)
		}
	case token.SequenceEndType, token.MappingEndType:
		if len(s.flows) > 0 {
			s.flows = s.flows[:len(s.flows)-1]
		}
	case token.DocumentHeaderType:
		s.levels = s.levels[:0]
		if s.markers++; s.markers > maxMarkers {
			return false, tooManyMarkers(line, col)
		}
	case token.SequenceEntryType:
		if len(s.flows) == 0 {
			return s.empty(i, col), s.entry(line, col, false)
		}
	case token.MappingKeyType:
		// "? a" is a key whose value is null unless a ":" follows;
		// count it as one.
		if len(s.flows) == 0 {
			return true, s.entry(line, col, true)
		}
		return true, nil
	case token.MappingValueType:
		switch {
		case len(s.flows) > 0:
			return next == nil || isFlowDelim(next), nil
		case prev != nil && prev.Type != token.MappingKeyType:
			c := prev.Position.Column
			return s.empty(i, c), s.entry(line, c, true)
		}
	default:
		// A key with no ":" in a flow mapping, as in {a, b}.
		return len(s.flows) > 0 && s.flows[len(s.flows)-1] && prev != nil &&
			(prev.Type == token.MappingStartType || prev.Type == token.CollectEntryType) && next != nil && isFlowDelim(next), nil
	}
	return false, nil
}

// at returns the i-th token, nil past either end.
func (s *tokenScan) at(i int) *token.Token {
	if i < 0 || i >= len(s.tokens) {
		return nil
	}
	return s.tokens[i]
}

// entry opens or continues the block level of an entry at column col of
// line; key says whether the entry is a key of a mapping, counted against
// MaxEntries and the budget of squares.
func (s *tokenScan) entry(line, col int, key bool) *Problem {
	for len(s.levels) > 0 && s.levels[len(s.levels)-1].col > col {
		s.levels = s.levels[:len(s.levels)-1]
	}
	if len(s.levels) == 0 || s.levels[len(s.levels)-1].col < col {
		s.levels = append(s.levels, level{col: col})
	}
	if key {
		k := &s.levels[len(s.levels)-1].keys
		*k++
		s.squares += 2**k - 1 // k² − (k−1)²
		if *k > MaxEntries {
			return tooManyEntries(line, col)
		}
		if s.squares > 2*MaxEntries*MaxEntries {
			return tooManyKeys(line, col)
		}
	}
	if len(s.levels)+len(s.flows) > MaxDepth {
		return tooDeep(line, col)
	}
	return nil
}

// empty reports whether the entry at column col that the i-th token
// begins or ends (a "-", or the ":" of a key) has no value: the next token
// is on a later line, and not indented more (a list at the key's column is
// the key's value).
func (s *tokenScan) empty(i, col int) bool {
	tk, next := s.tokens[i], s.at(i+1)
	return next != nil && next.Position.Line > tk.Position.Line &&
		(next.Position.Column < col || next.Position.Column == col && !(tk.Type == token.MappingValueType && next.Type == token.SequenceEntryType))
}

// isFlowDelim reports whether tk ends an entry of a flow collection.
func isFlowDelim(tk *token.Token) bool {
	return tk.Type == token.CollectEntryType || tk.Type == token.MappingEndType || tk.Type == token.SequenceEndType
}
