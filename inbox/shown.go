package inbox

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reveal returns s as a person must see it to decide on it, character for
// character: every character they could not see, or that would change the
// order or the look of what they see, is replaced by its code, a visible
// escape as Go writes it: \u202e for U+202E (RIGHT-TO-LEFT OVERRIDE),
// \U000e0041 beyond U+FFFF, \n, \t and \x1b for control characters. Those are the format characters (Unicode category Cf: bidi
// controls, zero-width spaces and joiners, the byte order mark, tags), the
// control characters (newline and tab among them), the line and paragraph
// separators, spaces other than U+0020 (such as U+00A0 NO-BREAK SPACE),
// the other default-ignorable characters (such as U+3164 HANGUL FILLER),
// variation selectors, private-use and unassigned code points, and a
// combining mark (such as U+0301 COMBINING ACUTE ACCENT) over a Latin,
// Greek, Cyrillic or Armenian letter, a digit or a sign, which would make
// it look like another character: the letters of other scripts keep their
// marks. Bytes that are not UTF-8 become U+FFFD. So "\u202e0052" reads
// \u202e0052, not 2500, two payees that differ by a U+200B differ on the
// screen, and "Jose\u0301" (é as e and a mark, NFD) reads Jose\u0301,
// not as "José" (é as one character, NFC).
//
// The inbox's pages show every field an agent controls through it (tool,
// input, run, call, idempotency key, and the names and comments of the
// audit trail); redisstore's toolsafe-approvals prints them through it.
func Reveal(s string) string {
	var b strings.Builder
	var c coder
	for _, r := range text(s) {
		if c.code(r) {
			b.WriteString(escape(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// coder tells, character by character, which characters of a text Reveal
// shows as their codes: the hidden ones, and a combining mark over a
// letter of a script that looks like Latin (Latin, Greek, Cyrillic,
// Armenian), a digit or a sign, which makes it look like another
// character ("e" and U+0301 look like "é", a different text) or hides
// it ("1" struck through). Marks over the letters of other scripts are
// theirs to carry. The zero coder is at the start of a text.
type coder struct{ base rune }

// code reports whether r, the next character, is shown as its code.
func (c *coder) code(r rune) bool {
	if !unicode.Is(unicode.M, r) {
		c.base = r
		return hidden(r)
	}
	return hidden(r) || c.base == 0 || scriptOf(c.base) >= 0 || !unicode.IsLetter(c.base) ||
		unicode.Is(unicode.Common, c.base) || unicode.Is(unicode.Inherited, c.base)
}

// Warnings says what a person should be warned of before deciding on s,
// the value of the field named what ("the call ID", "the input"): that s
// holds characters Reveal shows as codes (each named), and each value in
// it that mixes Latin letters with Cyrillic or Greek ones, which look
// alike ("pаypal" with a Cyrillic а), or Armenian ones, naming the
// letters of the script that is not the value's main one; and each value
// written wholly in Cyrillic or Greek letters that each look like a Latin
// one ("рау", all Cyrillic, reads as "pay"), saying how it reads. A value
// is the whole of s, or each string (key or value) of s when s is JSON, as
// decoded: an escape such as \u0430 counts as the letter it stands for.
// None for plain text ("Москва", "Сергей", "Αθήνα" have letters Latin has
// not). Values quoted in a warning are shown through Reveal.
//
// Lookalikes beyond these (a value of Cyrillic letters some of which look
// Latin, letters of other scripts) are not flagged: telling them needs
// Unicode's confusables data.
func Warnings(what, s string) []string {
	var out []string
	for _, w := range warningsOf(what, s, false) {
		out = append(out, w.String())
	}
	return out
}

// hidden reports whether a person could not see r, or would see it as
// something else (see Reveal).
func hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case r == 0x2800, // BRAILLE PATTERN BLANK: looks like a space
		unicode.Is(unicode.Zs, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r):
		return true
	}
	return !unicode.IsGraphic(r) // Cc, Cf, Co, Cn, Cs, Zl, Zp
}

// escape is r's visible code, as Go writes it: \n, \t, \x1b, \u202e,
// \U000e0041.
func escape(r rune) string { return strings.Trim(strconv.QuoteRuneToASCII(r), "'") }

// names are the hidden characters an agent's text is most likely to use,
// as Unicode names them.
var names = map[rune]string{
	'\t': "TAB", '\n': "LINE FEED", '\r': "CARRIAGE RETURN", 0x1b: "ESCAPE",
	0x00A0: "NO-BREAK SPACE", 0x00AD: "SOFT HYPHEN", 0x034F: "COMBINING GRAPHEME JOINER",
	0x061C: "ARABIC LETTER MARK", 0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER",
	0x180E: "MONGOLIAN VOWEL SEPARATOR", 0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER",
	0x200D: "ZERO WIDTH JOINER", 0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK",
	0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
	0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE", 0x202F: "NARROW NO-BREAK SPACE",
	0x2060: "WORD JOINER", 0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES",
	0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE", 0x2800: "BRAILLE PATTERN BLANK", 0x3000: "IDEOGRAPHIC SPACE",
	0x3164: "HANGUL FILLER", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE", 0xFFA0: "HALFWIDTH HANGUL FILLER",
	0x0300: "COMBINING GRAVE ACCENT", 0x0301: "COMBINING ACUTE ACCENT", 0x0302: "COMBINING CIRCUMFLEX ACCENT",
	0x0303: "COMBINING TILDE", 0x0306: "COMBINING BREVE", 0x0307: "COMBINING DOT ABOVE", 0x0308: "COMBINING DIAERESIS",
	0x030A: "COMBINING RING ABOVE", 0x030C: "COMBINING CARON", 0x0323: "COMBINING DOT BELOW", 0x0327: "COMBINING CEDILLA",
	0x0328: "COMBINING OGONEK", 0x0335: "COMBINING SHORT STROKE OVERLAY", 0x0336: "COMBINING LONG STROKE OVERLAY",
	0x0337: "COMBINING SHORT SOLIDUS OVERLAY", 0x0338: "COMBINING LONG SOLIDUS OVERLAY",
	0x20DD: "COMBINING ENCLOSING CIRCLE", 0x20E0: "COMBINING ENCLOSING CIRCLE BACKSLASH",
}

// nameOf names r, or says what kind of character it is.
func nameOf(r rune) string {
	if n, ok := names[r]; ok {
		return n
	}
	switch {
	case unicode.Is(unicode.Cf, r):
		return "a format character"
	case unicode.IsControl(r):
		return "a control character"
	case unicode.Is(unicode.Zs, r):
		return "a space other than U+0020"
	case unicode.Is(unicode.Co, r):
		return "a private-use character"
	case unicode.Is(unicode.Variation_Selector, r):
		return "a variation selector"
	case unicode.Is(unicode.M, r):
		return "a combining mark"
	case !unicode.IsGraphic(r):
		return "an unassigned code point"
	}
	return "an invisible character"
}

// rightToLeft reports whether r is in a block of right-to-left scripts
// (Hebrew, Arabic, Syriac, Thaana, N'Ko...), whose default bidi class is
// R or AL: such a value is isolated, so that it cannot reorder its
// neighbours.
func rightToLeft(r rune) bool {
	return r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFE ||
		r >= 0x10800 && r <= 0x10FFF || r >= 0x1E800 && r <= 0x1EFFF
}

// lookalikeScripts are the scripts whose letters look like Latin's.
var lookalikeScripts = [...]struct {
	name  string
	table *unicode.RangeTable
}{{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian}}

// scriptOf is the index in lookalikeScripts of letter r's script, or -1.
func scriptOf(r rune) int {
	if !unicode.IsLetter(r) {
		return -1
	}
	for i, s := range lookalikeScripts {
		if unicode.Is(s.table, r) {
			return i
		}
	}
	return -1
}

// mixed returns, when the value v mixes letters of lookalikeScripts, the
// scripts it mixes, its main one (the most letters; Latin on a tie) and
// the letters of the others, each once; else main -1.
func mixed(v string) (scripts []string, main int, others []rune) {
	var count [len(lookalikeScripts)]int
	for _, r := range v {
		if i := scriptOf(r); i >= 0 {
			count[i]++
		}
	}
	main = -1
	for i, n := range count {
		if n > 0 {
			scripts = append(scripts, lookalikeScripts[i].name)
			if main < 0 || n > count[main] {
				main = i
			}
		}
	}
	if len(scripts) < 2 {
		return nil, -1, nil
	}
	for _, r := range v {
		if i := scriptOf(r); i >= 0 && i != main && !containsRune(others, r) {
			others = append(others, r)
		}
	}
	return scripts, main, others
}

// latinLookalikes are the Cyrillic and Greek letters that look like a
// Latin letter in common fonts, and that letter (after Unicode's
// confusables data, the clearest of them).
var latinLookalikes = map[rune]rune{
	// Cyrillic
	'а': 'a', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'ӏ': 'l', 'о': 'o', 'р': 'p',
	'ԛ': 'q', 'ѕ': 's', 'ѵ': 'v', 'ԝ': 'w', 'х': 'x', 'у': 'y',
	'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O',
	'Р': 'P', 'Ԛ': 'Q', 'Ѕ': 'S', 'Т': 'T', 'Ԝ': 'W', 'Х': 'X', 'У': 'Y', 'Ү': 'Y',
	// Greek
	'α': 'a', 'ϲ': 'c', 'ι': 'i', 'ϳ': 'j', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'υ': 'u',
	'Α': 'A', 'Β': 'B', 'Ϲ': 'C', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ζ': 'Z',
}

// readsAsLatin reports whether every letter of v is a Cyrillic or Greek
// one that looks like a Latin letter (and there is one), and returns the
// script and v as it reads, those letters replaced by the Latin ones.
func readsAsLatin(v string) (script, reads string, ok bool) {
	var b strings.Builder
	for _, r := range v {
		if !unicode.IsLetter(r) {
			b.WriteRune(r)
			continue
		}
		l, lookalike := latinLookalikes[r]
		s := scriptOf(r)
		if !lookalike || script != "" && lookalikeScripts[s].name != script {
			return "", "", false
		}
		script = lookalikeScripts[s].name
		b.WriteRune(l)
	}
	return script, b.String(), script != ""
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// token is a part of a text: a JSON string (quotes included) or what lies
// between them.
type token struct {
	text string
	str  bool
}

// tokens splits the JSON text t into its strings and what lies between;
// a string cut short (a clipped text) runs to the end.
func tokens(t string) []token {
	var out []token
	start := 0
	for i := 0; i < len(t); i++ {
		if t[i] != '"' {
			continue
		}
		if i > start {
			out = append(out, token{t[start:i], false})
		}
		j := i + 1
		for j < len(t) && t[j] != '"' {
			if t[j] == '\\' {
				j++
			}
			j++
		}
		j = min(j+1, len(t))
		out = append(out, token{t[i:j], true})
		start, i = j, j-1
	}
	if start < len(t) {
		out = append(out, token{t[start:], false})
	}
	return out
}

// decoded is the value the JSON string token s stands for, or s without
// its quotes when it is cut short.
func decoded(s string) string {
	var v string
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return strings.TrimPrefix(s, `"`)
}

// values returns the values of s that Warnings looks at: each string of s
// when s is JSON, else s itself.
func values(s string) []string {
	if !json.Valid([]byte(s)) {
		return []string{s}
	}
	var out []string
	for _, t := range tokens(s) {
		if t.str {
			out = append(out, decoded(t.text))
		}
	}
	return out
}

// warning is one of Warnings: Text, the value quoted (shown), then After.
type warning struct {
	Text  string
	Value pieces
	After string

	quoted string // the value, through Reveal, for String
}

func (w warning) String() string {
	if w.Value == nil {
		return w.Text + w.After
	}
	return w.Text + "“" + w.quoted + "”" + w.After
}

// maxQuoted is how much of a value a warning quotes, in characters.
const maxQuoted = 60

// warningsOf is Warnings, keeping the values quoted as pieces for the
// pages; multiline says that s is shown on lines of its own (a newline in
// it is no hidden character).
func warningsOf(what, s string, multiline bool) []warning {
	s = text(s)
	var out []warning
	var found []rune
	for _, v := range values(s) {
		var c coder
		for _, r := range v {
			if c.code(r) && !(multiline && r == '\n') && !containsRune(found, r) {
				found = append(found, r)
			}
		}
	}
	if len(found) > 0 {
		var list []string
		for i, r := range found {
			if i == 5 {
				list = append(list, fmt.Sprintf("and %d more", len(found)-5))
				break
			}
			list = append(list, escape(r)+" ("+nameOf(r)+")")
		}
		out = append(out, warning{Text: fmt.Sprintf("%s holds characters that are invisible, or change the order or the look of the text, shown as their codes: %s.",
			upperFirst(what), strings.Join(list, ", "))})
	}
	for _, v := range values(s) {
		if script, reads, ok := readsAsLatin(v); ok {
			q := v
			if utf8.RuneCountInString(q) > maxQuoted {
				q, reads = string([]rune(q)[:maxQuoted])+"…", string([]rune(reads)[:maxQuoted])+"…"
			}
			out = append(out, warning{
				Text:   fmt.Sprintf("%s has a value of %s letters that all look like Latin ones: ", upperFirst(what), script),
				Value:  showValue(q, false),
				quoted: Reveal(q),
				After:  fmt.Sprintf(" (it reads as “%s”).", Reveal(reads)),
			})
			continue
		}
		scripts, main, others := mixed(v)
		if main < 0 {
			continue
		}
		q := v
		if utf8.RuneCountInString(q) > maxQuoted {
			q = string([]rune(q)[:maxQuoted]) + "…"
		}
		var letters []string
		for i, r := range others {
			if i == 5 {
				letters = append(letters, "…")
				break
			}
			letters = append(letters, string(r))
		}
		verb := "is"
		if len(letters) > 1 {
			verb = "are"
		}
		out = append(out, warning{
			Text:   fmt.Sprintf("%s has a value that mixes %s letters, which look alike: ", upperFirst(what), strings.Join(scripts, " and ")),
			Value:  showValue(q, false),
			quoted: Reveal(q),
			After:  fmt.Sprintf(" (%s %s not %s).", Reveal(strings.Join(letters, " ")), verb, lookalikeScripts[main].name),
		})
	}
	return out
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// piece is a part of a shown text: plain text, a hidden character's code
// (Esc), a letter of a script the value mixes in (Mark), or where a
// bidi-isolated value begins (Open) or ends (Close). Title says what an Esc
// or Mark is.
type piece struct {
	Text, Title            string
	Esc, Mark, Open, Close bool
}

// pieces is a text as the pages show it: the template "text" renders it,
// every part escaped by html/template.
type pieces []piece

// showValue shows the value v: its hidden characters as codes (a newline
// too, unless multiline), the letters of the scripts it mixes in marked,
// and the whole isolated when it holds right-to-left text.
func showValue(v string, multiline bool) pieces {
	v = text(v)
	_, main, _ := mixed(v)
	_, _, allLookalike := readsAsLatin(v)
	iso := strings.IndexFunc(v, rightToLeft) >= 0
	var out pieces
	if iso {
		out = append(out, piece{Open: true})
	}
	var plain strings.Builder
	flush := func() {
		if plain.Len() > 0 {
			out = append(out, piece{Text: plain.String()})
			plain.Reset()
		}
	}
	var c coder
	for _, r := range v {
		switch s := scriptOf(r); {
		case c.code(r) && !(multiline && r == '\n'):
			flush()
			out = append(out, piece{Text: escape(r), Esc: true, Title: fmt.Sprintf("U+%04X %s: invisible, or changes the order or the look of the text", r, nameOf(r))})
		case allLookalike && s >= 0:
			flush()
			out = append(out, piece{Text: string(r), Mark: true, Title: fmt.Sprintf("a %s letter that looks like Latin %c", lookalikeScripts[s].name, latinLookalikes[r])})
		case main >= 0 && s >= 0 && s != main:
			flush()
			out = append(out, piece{Text: string(r), Mark: true, Title: "a " + lookalikeScripts[s].name + " letter, in a value of " + lookalikeScripts[main].name + " letters"})
		default:
			plain.WriteRune(r)
		}
	}
	flush()
	if iso {
		out = append(out, piece{Close: true})
	}
	return out
}

// showInput shows the input t, as indented by prettyJSON and perhaps
// clipped: when it is JSON each string is a value of its own (see
// showValue), else t is one value.
func showInput(t string, isJSON bool) pieces {
	if !isJSON {
		return showValue(t, true)
	}
	var out pieces
	for _, tk := range tokens(t) {
		if tk.str {
			out = append(out, showValue(tk.text, false)...)
		} else {
			out = append(out, piece{Text: tk.text})
		}
	}
	return out
}
