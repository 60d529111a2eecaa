package inbox_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// Attack (issue 32, item 7's siblings): values a person cannot tell from
// others that Reveal showed as they were and Warnings passed: a payee
// whose accent is a separate combining character (NFD "Jose\u0301") beside
// the same name with é as one character (NFC), a mark drawn over a Latin
// letter or digit ("refund\u0338", "1\u0335"), a tool name or run ID
// written wholly in Cyrillic letters that look like Latin ones ("рау" for
// pay), and a Latin value with an Armenian lookalike ("օrder"). A
// combining mark over a Latin, Greek or Cyrillic letter or a digit is
// shown as its code, and each is warned of; text in other scripts (whose
// marks are their own), and Cyrillic that does not look Latin, is not.
func TestLookalikeValuesAreShownApartAndWarnedOf(t *testing.T) {
	for in, want := range map[string]string{
		"Jose\u0301":    `Jose\u0301`,
		"Jos\u00e9":     "Jos\u00e9",
		"refund\u0338":  `refund\u0338`,
		"1\u0335\u0336": `1\u0335\u0336`,
		"нет\u0301":     `нет\u0301`,
		"नमस्ते":        "नमस्ते",
		"Vi\u1ec7t":     "Vi\u1ec7t",
	} {
		if got := inbox.Reveal(in); got != want {
			t.Errorf("Reveal(%+q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		what, in string
		want     []string // each in some warning
	}{
		{"the input", `{"payee":"Jose` + "\u0301" + `"}`, []string{`\u0301 (COMBINING ACUTE ACCENT)`}},
		{"the input", `{"payee":"Jose\u0301"}`, []string{`\u0301 (COMBINING ACUTE ACCENT)`}}, // as a JSON escape
		{"the tool name", "refund\u0338", []string{`\u0338 (COMBINING LONG SOLIDUS OVERLAY)`}},
		{"the tool name", "\u0440\u0430\u0443", []string{"The tool name has a value of Cyrillic letters that all look like Latin ones: “рау” (it reads as “pay”)."}},
		{"the run ID", "\u0455\u0441\u043e\u0440\u0435", []string{"Cyrillic letters that all look like Latin ones", "(it reads as “scope”)"}},
		{"the input", `{"to":"\u0391\u0392\u0395"}`, []string{"Greek letters that all look like Latin ones", "“ABE”"}},
		{"the input", `{"order":"` + "\u0585" + `rder"}`, []string{"mixes Latin and Armenian letters", "(օ is not Latin)"}},
	} {
		ws := strings.Join(inbox.Warnings(c.what, c.in), "\n")
		for _, w := range c.want {
			if !strings.Contains(ws, w) {
				t.Errorf("Warnings(%q, %+q) = %q; want %q", c.what, c.in, ws, w)
			}
		}
	}
	for _, plain := range []string{"Jos\u00e9", "Vi\u1ec7t", "नमस्ते", "Москва", "Сергей", `{"city":"Москва","name":"Müller"}`, "Αθήνα", "Երևան"} {
		if ws := inbox.Warnings("the input", plain); len(ws) != 0 {
			t.Errorf("Warnings(%q) = %q; want none", plain, ws)
		}
	}
}

// Two runs wait on a payment to the same payee as a person reads it, one
// written in NFC, the other in NFD: the pages show them apart, the NFD one
// with its mark as a code, and warn of it.
func TestNFCAndNFDVariantsOfOnePayeeLookDifferentInTheInbox(t *testing.T) {
	g := approval.NewGrants()
	nfc := approval.CallInfo{Tool: "pay", CallID: "call_1", Input: `{"payee":"Jos` + "\u00e9" + `","eur":10}`, Attempt: 1, RunID: "run-1"}
	nfd := approval.CallInfo{Tool: "pay", CallID: "call_2", Input: `{"payee":"Jose` + "\u0301" + `","eur":10}`, Attempt: 1, RunID: "run-2"}
	for _, c := range []approval.CallInfo{nfc, nfd} {
		if _, err := g.Decide(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	h := newInbox(t, inbox.Memory(g))
	list := get(h, "alice", "/").Body.String()
	if !strings.Contains(list, "Jos\u00e9") || !strings.Contains(list, `Jose<span class="esc" title="U&#43;0301 COMBINING ACUTE ACCENT`) {
		t.Errorf("the list does not show the two payees apart:\n%s", list)
	}
	for _, r := range g.Requests() {
		page := get(h, "alice", "/request?id="+url.QueryEscape(r.ID)).Body.String()
		warned := strings.Contains(page, "COMBINING ACUTE ACCENT")
		if warned != (r.Call.RunID == "run-2") {
			t.Errorf("the page of %s warns of the accent: %v", r.Call.RunID, warned)
		}
	}
}
