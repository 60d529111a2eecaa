package yamlread

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/lexer"
)

func TestScanTokensHoldsTheLexersTokensToTheLimits(t *testing.T) {
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "k%d: 1\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name string
		yaml string
		says string // a part of the problem's message; "" for none
	}{
		{"MaxDepth flow levels", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), ""},
		{"one flow level too many", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nests deeper than 32 levels"},
		{"MaxEntries keys", keys(MaxEntries), ""},
		{"one key too many", keys(MaxEntries + 1), "more than 5000 keys"},
		{"keys of flow mappings do not count", "{" + strings.Repeat("a: 1, ", MaxEntries+1) + "}", ""},
		{"eight markers", strings.Repeat("---\n", maxMarkers), ""},
		{"nine markers", strings.Repeat("---\n", maxMarkers+1), "more than 8 document markers"},
		{"empty values past the budget", strings.Repeat("-\n", 1<<15), "too many empty values"},
		{"values written ~ are not empty", strings.Repeat("- ~\n", 1<<15), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := scanTokens(lexer.Tokenize(tt.yaml))
			switch {
			case tt.says == "" && p != nil:
				t.Errorf("scanTokens = %+v; want no problem", p)
			case tt.says != "" && (p == nil || !strings.Contains(p.Message, tt.says)):
				t.Errorf("scanTokens = %+v; want …%s…", p, tt.says)
			}
		})
	}
}
