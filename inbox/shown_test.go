package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

func TestRevealShowsEveryCharacterAPersonCouldNotSee(t *testing.T) {
	for in, want := range map[string]string{
		"\u202e0052":                 `\u202e0052`,
		"call_\u202efdp.exe":         `call_\u202efdp.exe`,
		"Acme\u200bCorp":             `Acme\u200bCorp`,
		"Acme\u00a0Corp":             `Acme\u00a0Corp`,
		"a\u2066b\u2069\u200e\u061c": `a\u2066b\u2069\u200e\u061c`,
		"\ufeffx\u00ad\u2060\u3164":  `\ufeffx\u00ad\u2060\u3164`,
		"tag\U000e0041\U000e007f":    `tag\U000e0041\U000e007f`,
		"\x1b[2J\r\nnext\tcol":       `\x1b[2J\r\nnext\tcol`,
		"ok \xff":                    "ok \ufffd",
		"Müller, Москва, עברית 25 €": "Müller, Москва, עברית 25 €",
	} {
		if got := inbox.Reveal(in); got != want {
			t.Errorf("Reveal(%+q) = %q, want %q", in, got, want)
		}
	}
}

func TestWarningsNameHiddenCharactersAndMixedScripts(t *testing.T) {
	for _, c := range []struct {
		what, in string
		want     []string // each in some warning
	}{
		{"the call ID", "call_\u202efdp.exe", []string{"The call ID holds characters that are invisible", `\u202e (RIGHT-TO-LEFT OVERRIDE)`}},
		{"the input", `{"payee":"Acme` + "\u200b" + `"}`, []string{`\u200b (ZERO WIDTH SPACE)`}},
		{"the input", `{"payee":"p\u0430ypal"}`, []string{`The input has a value that mixes Latin and Cyrillic letters, which look alike: “pаypal” (а is not Latin).`}},
		{"the tool name", "rеfund", []string{"mixes Latin and Cyrillic", "(е is not Latin)"}},
		{"the run ID", "Αpple", []string{"mixes Latin and Greek", "(Α is not Latin)"}},
	} {
		ws := strings.Join(inbox.Warnings(c.what, c.in), "\n")
		for _, w := range c.want {
			if !strings.Contains(ws, w) {
				t.Errorf("Warnings(%q, %+q) = %q; want %q", c.what, c.in, ws, w)
			}
		}
	}
	for _, plain := range []string{`{"order":"A-1001","amount_eur":25}`, "Müller", "Москва", `{"city":"Москва","name":"Müller"}`, "line one\nline two"} {
		if ws := inbox.Warnings("the input", plain); len(ws) != 0 && !strings.Contains(plain, "\n") {
			t.Errorf("Warnings(%q) = %q; want none", plain, ws)
		}
	}
}

// Regression (issue 32, item 7): "\u202e0052" showed as 2500, a call ID
// call_\u202efdp.exe as call_exe.pdf, and two payees that differ by a
// U+200B were pixel-identical, in the list, the request's page and the
// audit trail.
func TestInvisibleAndDirectionChangingCharactersReachThePersonEscaped(t *testing.T) {
	input := "{\"order\":\"A-1001\",\"amount_eur\":\"\u202e0052\",\"payee\":\"Acme\u200b\",\"note\":\"\u05e9\u05dc\u05dd\"}"
	c := approval.CallInfo{Tool: "refund", CallID: "call_\u202efdp.exe", Input: input, Attempt: 1, RunID: "run-\u200b7"}
	g := waiting(t, c)
	h := newInbox(t, inbox.Memory(g))
	id := onlyRequest(t, g).ID
	check := func(where, body string, wants ...string) {
		t.Helper()
		for _, raw := range []string{"\u202e", "\u200b"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %+q raw", where, raw)
			}
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%s", where, w, body)
			}
		}
	}
	escaped := []string{
		`&#34;<span class="esc" title="U&#43;202E RIGHT-TO-LEFT OVERRIDE: invisible, or changes the order or the look of the text">\u202e</span>0052&#34;`,
		`call_<span class="esc"`, `Acme<span class="esc"`,
		`<bdi dir="auto">&#34;שלם&#34;</bdi>`, // a right-to-left value is isolated
		"The call ID holds characters that are invisible",
	}
	check("the list", get(h, "alice", "/").Body.String(), escaped...)
	check("the request's page", get(h, "alice", "/request?id="+url.QueryEscape(id)).Body.String(),
		append(escaped, `id="warnings"`, "The run ID holds characters")...)
	w := send(h, "alice", http.MethodPost, "/decide", form(t, h, "alice", id, "approve", "ok\u202e"))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("POST: %d", w.Code)
	}
	check("the audit trail", get(h, "alice", "/audit").Body.String(), append(escaped, `ok<span class="esc"`, "The comment holds characters")...)
	check("the answered request", get(h, "alice", "/request?id="+url.QueryEscape(id)).Body.String(), `ok<span class="esc"`)
}
