package inbox_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// The arguments to edit are shown character for character too: a
// right-to-left override in the model's amount must not make the
// textarea read 2500 for what is "\u202e0052" (and the page's Input above
// reads \u202e0052), nor a zero-width space hide in a payee. The textarea
// holds the same JSON value, its hidden characters as JSON escapes, so
// approving it unchanged approves the call as shown.
func TestTheArgumentsToEditShowTheirHiddenCharactersAsEscapes(t *testing.T) {
	const input = "{\"order\":\"A-1001\",\"amount_eur\":\"\u202e0052\",\"payee\":\"Jos\u200be\u0301\",\"emoji\":\"\U0001F600\",\"city\":\"Москва\"}"
	g := waiting(t, approval.CallInfo{Tool: "refund", Input: input, RunID: "run-7"})
	h := newInbox(t, inbox.Memory(g), inbox.WithInputCheck(func(string, string) error { return nil }))
	id := onlyRequest(t, g).ID
	f := submitted(t, h, "alice", id, "approve")
	edit := f.Get("changed")
	for _, r := range []string{"\u202e", "\u200b", "\u0301"} {
		if strings.Contains(edit, r) {
			t.Errorf("the textarea holds %q as it is:\n%s", r, edit)
		}
	}
	if !strings.Contains(edit, `\u202e0052`) || !strings.Contains(edit, "Москва") || !strings.Contains(edit, "\U0001F600") {
		t.Errorf("the textarea:\n%s", edit)
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(edit), &a) != nil || json.Unmarshal([]byte(input), &b) != nil || html.EscapeString(a["payee"].(string)) != html.EscapeString(b["payee"].(string)) {
		t.Fatalf("the textarea is not the same JSON value:\n%s", edit)
	}
	if w := send(h, "alice", http.MethodPost, "/decide", f); w.Code != http.StatusSeeOther {
		t.Fatalf("approve, nothing touched: %d\n%s", w.Code, w.Body)
	}
	if d, _ := g.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: input, RunID: "run-7"}); d != approval.Approved {
		t.Fatalf("the call as shown: %v", d)
	}
}
