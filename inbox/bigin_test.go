package inbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/inbox"
)

// Issue 28: a 200 KB input made the request page 46,000 px tall, with the
// amount and the payee after the padding. The page lists a big input's
// top-level fields, the short ones first, folds the long ones with their
// sizes, and still shows every hidden character of every value.
func TestAHugeInputIsSummarisedWithItsShortFieldsFirst(t *testing.T) {
	input, _ := json.Marshal(map[string]any{
		"note":       strings.Repeat("padding ", 25000),
		"amount_eur": 2500,
		"payee":      "Acme\u202eCorp",
	})
	c := refundCall(string(input), 1)
	g := waiting(t, c)
	h := newInbox(t, inbox.Memory(g))
	page := get(h, "alice", "/request?id="+onlyRequest(t, g).ID).Body.String()
	amount, payee, details := strings.Index(page, "2500"), strings.Index(page, "Acme"), strings.Index(page, "<details><summary>200.0 KB</summary>")
	if !strings.Contains(page, "This input is 200.1 KB: its short fields come first") || amount < 0 || payee < 0 || details < 0 || amount > details || payee > details {
		t.Fatalf("the page of a 200 KB input: summary %v, amount at %d, payee at %d, the folded padding at %d; want the summary, and amount and payee before the padding",
			strings.Contains(page, "This input is 200.1 KB"), amount, payee, details)
	}
	if !strings.Contains(page, `<span class="esc" title="U&#43;202E`) {
		t.Error("the payee's right-to-left override is not shown as a visible escape in the summary")
	}
	// A small input is shown whole, as before.
	small := waiting(t, refundCall(refundInput, 1))
	hs := newInbox(t, inbox.Memory(small))
	if page := get(hs, "alice", "/request?id="+onlyRequest(t, small).ID).Body.String(); strings.Contains(page, `id="summary"`) || !strings.Contains(page, `<pre dir="ltr" class="input" id="input">`) {
		t.Error("a small input is summarised")
	}
}
