// Package canonical spells JSON inputs in one form, so that toolsafe can
// match one call's input with another's (grants, resumed runs, the run
// ledger, the loop guard) whatever their key order or spacing: RFC 8785,
// JSON Canonicalization Scheme, with numbers compared by exact decimal
// value.
package canonical

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolsafe/toolsafe/middleware"
)

// JSON returns the form in which toolsafe compares one call's input
// with another's, wherever it matches calls (grants, Resume, the run
// ledger, the loop guard): for an input that is valid JSON, its canonical
// form, so that key order and spacing do not matter; any other text as it
// is. Input that CheckText refuses (bytes that are not UTF-8, a lone
// surrogate escape) is refused with its *middleware.ArgsError: two
// different inputs never compare equal.
//
// The canonical form follows RFC 8785 (JSON Canonicalization Scheme):
// object keys sorted by their UTF-16 code units, no insignificant
// whitespace, strings in one spelling. Numbers are stricter than RFC
// 8785's, which reads every number as a double: two numbers are the same
// when their decimal values are equal (1, 1.0 and 1e0 are one number), so
// integers beyond 2^53, which Go decodes exactly into an int64, stay
// distinct, and a number out of a double's range still compares by value.
// A number a double can hold is spelled as RFC 8785 spells it (100, 1.5,
// 1e+21).
//
// It returns a *middleware.ArgsError (kind args-invalid) for JSON whose object keys
// repeat, or differ only in case, at any depth (case as Unicode folds it,
// so "ſum" and "sum" collide, and "K", the Kelvin sign, and "k"): a JSON
// Schema check and Go's encoding/json, which matches keys
// case-insensitively and keeps the last, could read such an input
// differently ({"amount":5,"AMOUNT":50000} passes a schema's maximum and
// refunds 50000).
func JSON(input string) (string, error) {
	if !utf8.ValidString(input) {
		return "", notUTF8(input)
	}
	b := []byte(input)
	if !json.Valid(b) { // also bounds the depth (encoding/json's 10000)
		return input, nil
	}
	if err := loneSurrogate(input); err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var path []string
	v, err := readValue(dec, &path)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	out.Grow(len(input))
	v.write(&out)
	return out.String(), nil
}

// jsonValue is a decoded JSON value: a scalar, already spelled
// canonically, an array or an object.
type jsonValue struct {
	scalar  string // when neither array nor object
	array   []jsonValue
	members []jsonMember
	isArray bool
	isObj   bool
}

type jsonMember struct {
	key   string
	utf16 []uint16 // the sort key
	value jsonValue
}

// readValue reads one value from dec; path holds the keys down to it, for
// an error, which joins them by dots (joined only then: a deep input with
// long keys would otherwise cost the square of its size). The input is
// valid JSON.
func readValue(dec *json.Decoder, path *[]string) (jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonValue{}, fmt.Errorf("toolsafe: canonical JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			v := jsonValue{isArray: true}
			for dec.More() {
				e, err := readValue(dec, path)
				if err != nil {
					return jsonValue{}, err
				}
				v.array = append(v.array, e)
			}
			_, err := dec.Token() // ]
			return v, err
		}
		v := jsonValue{isObj: true}
		seen := map[string]string{} // folded key → key as given
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return jsonValue{}, err
			}
			name, _ := kt.(string)
			folded := FoldCase(name)
			if prev, dup := seen[folded]; dup {
				full := strings.Join(append(slices.Clip(*path), name), ".")
				if prev == name {
					return jsonValue{}, middleware.InvalidArgs(fmt.Sprintf("argument %s is given twice; send each argument once", strconv.Quote(full)))
				}
				return jsonValue{}, middleware.InvalidArgs(fmt.Sprintf("argument %s is given twice, as %s and %s; send each argument once, spelled as the tool expects",
					strconv.Quote(full), strconv.Quote(prev), strconv.Quote(name)))
			}
			seen[folded] = name
			*path = append(*path, name)
			e, err := readValue(dec, path)
			*path = (*path)[:len(*path)-1]
			if err != nil {
				return jsonValue{}, err
			}
			v.members = append(v.members, jsonMember{key: name, utf16: utf16.Encode([]rune(name)), value: e})
		}
		slices.SortFunc(v.members, func(a, b jsonMember) int { return slices.Compare(a.utf16, b.utf16) })
		_, err := dec.Token() // }
		return v, err
	case string:
		var b strings.Builder
		writeString(&b, t)
		return jsonValue{scalar: b.String()}, nil
	case json.Number:
		return jsonValue{scalar: canonicalNumber(string(t))}, nil
	case bool:
		return jsonValue{scalar: strconv.FormatBool(t)}, nil
	default: // nil
		return jsonValue{scalar: "null"}, nil
	}
}

func (v jsonValue) write(b *strings.Builder) {
	switch {
	case v.isArray:
		b.WriteByte('[')
		for i, e := range v.array {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case v.isObj:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			m.value.write(b)
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.scalar)
	}
}

// writeString writes s as RFC 8785 §3.2.2.2 spells a string: only the
// quote, the backslash and the control characters escaped, the short
// escapes where JSON has them, the rest as UTF-8. encoding/json has
// already made s valid UTF-8.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// FoldCase maps every rune of s to the smallest rune of its Unicode case
// folding orbit, so that two strings equal under strings.EqualFold map to
// the same string: the key toolsafe compares names and JSON keys by when
// case must not matter (encoding/json matches keys so, and folds more than
// strings.ToLower: "ſ" is "s", the Kelvin sign "k"). Bytes that are not
// UTF-8 stay U+FFFD.
func FoldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == utf8.RuneError {
			b.WriteRune(r)
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// canonicalNumber spells the JSON number n so that two numbers of equal
// decimal value are spelled alike: as ECMAScript (and so RFC 8785) spells
// a double, without rounding anything: all of n's significant digits are
// kept.
func canonicalNumber(n string) string {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	mant, expText, _ := strings.Cut(strings.ToLower(n), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0" // and -0, which decodes to the same integer
	}
	// value = digits × 10^exp
	trimmed := strings.TrimRight(digits, "0")
	shift := int64(len(digits)-len(trimmed)) - int64(len(frac))
	digits = trimmed
	exp, err := strconv.ParseInt(strings.TrimPrefix(expText, "+"), 10, 64)
	if expText == "" {
		exp, err = 0, nil
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if err != nil || exp > 1<<40 || exp < -(1<<40) {
		// An exponent beyond any use: exact all the same.
		e, _ := new(big.Int).SetString(strings.TrimPrefix(expText, "+"), 10)
		e.Add(e, big.NewInt(shift+int64(len(digits))-1))
		return sign + scientific(digits) + "e" + signed(e.String())
	}
	exp += shift
	// point is where the decimal point falls among digits.
	point := int64(len(digits)) + exp
	switch {
	case exp >= 0 && point <= 21:
		return sign + digits + strings.Repeat("0", int(exp))
	case exp < 0 && point > 0:
		return sign + digits[:point] + "." + digits[point:]
	case exp < 0 && point > -6:
		return sign + "0." + strings.Repeat("0", int(-point)) + digits
	default:
		return sign + scientific(digits) + "e" + signed(strconv.FormatInt(point-1, 10))
	}
}

// scientific puts a decimal point after the first of digits, if there are
// more.
func scientific(digits string) string {
	if len(digits) == 1 {
		return digits
	}
	return digits[:1] + "." + digits[1:]
}

func signed(e string) string {
	if strings.HasPrefix(e, "-") {
		return e
	}
	return "+" + e
}
