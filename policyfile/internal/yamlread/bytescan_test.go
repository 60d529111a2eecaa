package yamlread

import (
	"strings"
	"testing"
)

func TestScanBytesCountsLevelsOutsideQuotesCommentsAndBlockText(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth)
	tests := []struct {
		name      string
		yaml      string
		line, col int // of the depth problem; 0 for none
	}{
		{"brackets after a key", "a: " + deep + "\n", 1, 3 + MaxDepth},
		{"brackets in double quotes", "a: \"" + deep + "\"\n", 0, 0},
		{"brackets in single quotes, with '' inside", "a: 'it''s " + deep + "'\n", 0, 0},
		{"brackets in a comment", "a: 1 # " + deep + "\n", 0, 0},
		{"brackets in block text", "a: |\n  " + deep + "\nb: 1\n", 0, 0},
		{"brackets after block text ends", "a: >-\n  x\nb: " + deep + "\n", 3, 3 + MaxDepth},
		{"brackets inside plain text", "a: x" + deep + "\n", 0, 0},
		{"brackets after an anchor", "a: &x " + deep + "\n", 1, 6 + MaxDepth},
		{"a level at each - on one line", "a:\n" + strings.Repeat("- ", MaxDepth+1) + "b\n", 2, 2*MaxDepth + 1},
		{"a document marker closes the levels", nestedKeys(MaxDepth-1) + "---\n" + nestedKeys(MaxDepth-1), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := scanBytes([]byte(tt.yaml))
			switch {
			case tt.line == 0 && p != nil:
				t.Errorf("scanBytes = %+v; want no problem", p)
			case tt.line != 0 && (p == nil || p.Line != tt.line || p.Column != tt.col):
				t.Errorf("scanBytes = %+v; want the depth problem at %d:%d", p, tt.line, tt.col)
			}
		})
	}
}

func TestScanBytesRefusesAFilePastMaxSize(t *testing.T) {
	if p := scanBytes(make([]byte, MaxSize+1)); p == nil || !strings.Contains(p.Message, "more than 1048576 bytes") {
		t.Errorf("scanBytes = %+v; want the size problem", p)
	}
	if p := scanBytes([]byte(strings.Repeat("\n", MaxSize))); p != nil {
		t.Errorf("scanBytes of MaxSize bytes = %+v; want no problem", p)
	}
}

// nestedKeys is n mappings nested by indentation, one key each.
func nestedKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

func TestTheByteScanRecognizesIndicators(t *testing.T) {
	for _, tt := range []struct {
		rest string
		want bool
	}{{"", true}, {"-", true}, {"+2 # text", true}, {"  \r", true}, {" x", false}, {"x", false}, {"2-#", false}} {
		if got := isScalarHeader([]byte(tt.rest)); got != tt.want {
			t.Errorf("isScalarHeader(%q) = %v; want %v", tt.rest, got, tt.want)
		}
	}
	for _, tt := range []struct {
		line string
		want bool
	}{{"---", true}, {"--- a", true}, {"...\r", true}, {"----", false}, {"--", false}, {"-- -", false}} {
		if got := isMarker([]byte(tt.line)); got != tt.want {
			t.Errorf("isMarker(%q) = %v; want %v", tt.line, got, tt.want)
		}
	}
	for _, tt := range []struct {
		line string
		want int
	}{{`"a\"b" c`, 5}, {`'it''s' c`, 6}, {`"open`, 4}, {`'a\' b`, 3}} {
		if got := skipQuote([]byte(tt.line), 0); got != tt.want {
			t.Errorf("skipQuote(%q) = %d; want %d", tt.line, got, tt.want)
		}
	}
}
