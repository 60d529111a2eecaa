package middleware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"
)

// Canonical returns the form in which toolsafe compares one call's input
// with another's, wherever it matches calls (grants, Resume, the run
// ledger): for an input that is valid JSON, its RFC 8785 canonical form
// (JSON Canonicalization Scheme: object keys sorted, insignificant
// whitespace dropped, numbers and strings in one spelling), so that key
// order and spacing do not matter; any other input as it is.
//
// It returns an *ArgsError (kind args-invalid) for JSON whose object keys
// repeat, or differ only in case, at any depth: a JSON Schema check and Go's
// encoding/json, which matches keys case-insensitively and keeps the last,
// could read such an input differently ({"amount":5,"AMOUNT":50000} passes
// a schema's maximum and refunds 50000).
func Canonical(input string) (string, error) {
	b := []byte(input)
	if !json.Valid(b) {
		return input, nil
	}
	if err := checkKeys(b); err != nil {
		return "", err
	}
	out, err := jcs.Transform(b)
	if err != nil {
		// Valid JSON that RFC 8785 cannot express (a number out of the
		// range of a double, say): compared as it is.
		return input, nil
	}
	return string(out), nil
}

// checkKeys reports the first object, at any depth, whose keys repeat or
// differ only in case. data is valid JSON.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object  bool
		path    string
		keys    map[string]string // folded key → key as given
		wantKey bool              // in an object, the next token is a key
		lastKey string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF; json.Valid said the rest is valid
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].wantKey = true
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			name, _ := tok.(string)
			folded := strings.ToLower(name)
			full := name
			if top.path != "" {
				full = top.path + "." + name
			}
			if prev, dup := top.keys[folded]; dup {
				if prev == name {
					return InvalidArgs(fmt.Sprintf("argument %s is given twice; send each argument once", strconv.Quote(full)))
				}
				return InvalidArgs(fmt.Sprintf("argument %s is given twice, as %s and %s; send each argument once, spelled as the tool expects",
					strconv.Quote(full), strconv.Quote(prev), strconv.Quote(name)))
			}
			top.keys[folded] = name
			top.wantKey, top.lastKey = false, full
			continue
		}
		// A value: of an object's key, an array's element, or the top.
		childPath := ""
		if top != nil {
			childPath = top.path
			if top.object {
				childPath = top.lastKey
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, path: childPath, keys: map[string]string{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: childPath})
		default:
			if top != nil && top.object {
				top.wantKey = true
			}
		}
	}
}
