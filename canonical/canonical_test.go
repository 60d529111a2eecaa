package canonical_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/middleware"
)

func canon(t *testing.T, in string) string {
	t.Helper()
	out, err := canonical.JSON(in)
	if err != nil {
		t.Fatalf("Canonical(%s): %v", in, err)
	}
	return out
}

func TestCanonicalSpellsJSONAsRFC8785(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{ "b" : 2, "a" : [1, 2.50, true, null] }`, `{"a":[1,2.5,true,null],"b":2}`},
		// RFC 8785 §3.2.2.3 and its appendix B: numbers as ECMAScript spells them.
		{`[1e30, 4.50, 2e-3, 0.000000000000000000000000001, 1E21, 1e20, -0, 0.000001, 1e-7, 123456789012]`,
			`[1e+30,4.5,0.002,1e-27,1e+21,100000000000000000000,0,0.000001,1e-7,123456789012]`},
		// Strings: only " \ and control characters escaped, the rest as UTF-8.
		{`["\u0061\u00e9\u20ac", "\/", "\u001f\n", "😀"]`, `["aé€","/","\u001f\n","😀"]`},
		// Keys sorted by UTF-16 code units (RFC 8785 §3.2.3): U+1F600's
		// surrogates (D83D DE00) sort before U+FB33, though its code point is larger.
		{`{"\ud83d\ude00":1,"\ufb33":2,"a":3}`, "{\"a\":3,\"\U0001F600\":1,\"\ufb33\":2}"},
		{`"plain text"`, `"plain text"`},
		{`not json {`, `not json {`},
	} {
		if got := canon(t, tt.in); got != tt.want {
			t.Errorf("Canonical(%s) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

// Two inputs match (a grant, a resumed call, a ledger entry) exactly when
// Go would decode the same values from them.
func TestCanonicalMatchesEqualValuesOnly(t *testing.T) {
	same := [][]string{
		{`{"amount":5,"order":"A-1"}`, `{"order":"A-1","amount":5}`, "{\n \"order\" : \"A-1\",\t\"amount\": 5.0 }", `{"amount":5e0,"order":"\u0041-1"}`, `{"amount":0.5E1,"order":"A-1"}`},
		{`{"ref":1e400,"amount":5}`, `{"amount":5,"ref":1E+400}`, `{"amount":5,"ref":10e399}`},
		{`[0]`, `[-0]`, `[0.000]`, `[0e7]`},
		{`{"n":1e99999999999999999999999}`, `{"n":10e99999999999999999999998}`},
	}
	for _, group := range same {
		want := canon(t, group[0])
		for _, in := range group[1:] {
			if got := canon(t, in); got != want {
				t.Errorf("Canonical(%s) = %s; want it to match %s (%s)", in, got, group[0], want)
			}
		}
	}
	distinct := []string{
		`{"order_id":9007199254740992}`, `{"order_id":9007199254740993}`, // beyond 2^53: a double cannot tell them apart
		`{"order_id":12345678901234567890123}`, `{"order_id":12345678901234567890124}`,
		`{"x":0.1}`, `{"x":0.10000000000000001}`, // one double, two decimals: matched strictly
		`{"x":1e400}`, `{"x":1e401}`, `{"x":-1e400}`,
		`{"n":1e99999999999999999999999}`, `{"n":1e99999999999999999999998}`,
		`{"x":"5"}`, `{"x":5}`, `{"x":[5]}`, `{"x":{"y":5}}`, `{"x":null}`, `{"x":true}`,
	}
	seen := map[string]string{}
	for _, in := range distinct {
		c := canon(t, in)
		if prev, ok := seen[c]; ok {
			t.Errorf("Canonical(%s) = Canonical(%s) = %s; want them distinct", in, prev, c)
		}
		seen[c] = in
	}
}

func TestCanonicalRefusesKeysThatCollide(t *testing.T) {
	for _, tt := range []struct{ in, says string }{
		{`{"amount":5,"amount":50000}`, `argument "amount" is given twice; send each argument once`},
		{`{"amount":5,"AMOUNT":50000}`, `argument "AMOUNT" is given twice, as "amount" and "AMOUNT"`},
		{`{"sum":5,"ſum":50000}`, `as "sum" and "ſum"`},               // encoding/json folds ſ to s
		{`{"kind":1,"\u212aind":2}`, "as \"kind\" and \"\u212aind\""}, // the Kelvin sign
		{`{"a":1,"\u0061":2}`, `argument "a" is given twice`},
		{`{"x":{"ok":1},"y":[{"id":1,"ID":2}]}`, `argument "y.ID" is given twice`},
	} {
		_, err := canonical.JSON(tt.in)
		var ae *middleware.ArgsError
		if kind, _ := middleware.Classify(err); !errors.As(err, &ae) || kind != middleware.KindArgsInvalid {
			t.Errorf("Canonical(%s): %v; want an args-invalid *ArgsError", tt.in, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Canonical(%s): %q; want it to say %q", tt.in, err, tt.says)
		}
	}
}

func BenchmarkCanonical(b *testing.B) {
	in := `{"order":"A-1001","amount_eur":25.50,"lines":[{"sku":"X-1","qty":2},{"sku":"Y-2","qty":1}],"note":"refund asked by phone"}`
	for b.Loop() {
		if _, err := canonical.JSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

// Regression (issue "exactly once under store faults", item 3): inputs
// that are not valid UTF-8 compared equal: {"acct":"\xff"} and
// {"acct":"\xfe"} both read as U+FFFD, so a grant for one covered the
// other and a resumed run replayed the wrong record. JSON is UTF-8 (RFC
// 8259 §8.1): such input, and a lone surrogate escape that Go also reads as
// U+FFFD, is args-invalid; text that is not JSON is refused alike.
func TestInputsThatAreNotValidUTF8NeverCompareEqual(t *testing.T) {
	refused := []struct{ in, says string }{
		{"{\"acct\":\"\xff\"}", "offset 9 is not UTF-8"},
		{"{\"acct\":\"\xfe\"}", "offset 9 is not UTF-8"},
		{"acct \xff", "offset 5 is not UTF-8"}, // not JSON: refused all the same
		{`{"acct":"\ud800"}`, `\ud800 at offset 9`},
		{`{"acct":"\udfff"}`, `\udfff at offset 9`},
		{`{"acct":"a\ud83dx"}`, `\ud83d at offset 10`},
		{`{"acct":"\ud83d\u0041"}`, `\ud83d at offset 9`},
		{`["\ude00\ud83d"]`, `\ude00 at offset 2`},
	}
	for _, tt := range refused {
		_, err := canonical.JSON(tt.in)
		var ae *middleware.ArgsError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("JSON(%q): %v; want an *ArgsError saying %q", tt.in, err, tt.says)
		}
		if cerr := canonical.CheckText(tt.in); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("CheckText(%q) = %v; want %v", tt.in, cerr, err)
		}
		if strings.Contains(err.Error(), "acct") {
			t.Errorf("JSON(%q): %q quotes the input", tt.in, err)
		}
	}
	// What stays accepted: whole pairs, escaped backslashes before a "u",
	// U+FFFD itself, and text that is not JSON but is UTF-8.
	for in, want := range map[string]string{
		`{"a":"\ud83d\ude00"}`: "{\"a\":\"\U0001F600\"}",
		`{"a":"\\ud800"}`:      `{"a":"\\ud800"}`,
		`{"a":"\ufffd"}`:       "{\"a\":\"\ufffd\"}",
		`\ud800 as plain text`: `\ud800 as plain text`,
	} {
		if got := canon(t, in); got != want {
			t.Errorf("JSON(%s) = %s; want %s", in, got, want)
		}
		if err := canonical.CheckText(in); err != nil {
			t.Errorf("CheckText(%s): %v", in, err)
		}
	}
}
