package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// bigInput is the size of an input, in bytes, from which the request page
// lists its top-level fields, short ones first, and folds the long ones:
// 4 KiB. A 200 KB input then does not push the amount and the payee past
// its padding.
const bigInput = 4 << 10

// longField is the size of a field's value, in bytes, past which a big
// input's field is folded: 256.
const longField = 256

// fieldView is one top-level field of a big JSON object input.
type fieldView struct {
	Name   pieces
	Value  pieces
	Size   string // its value's size, as a person reads it
	Folded bool
}

// bigFields returns the top-level fields of input when it is a JSON object
// of at least bigInput bytes: the short ones first, in their order, then
// the long ones, folded. It returns nil for a smaller input or one that is
// not a JSON object (the page shows it whole).
func bigFields(input string) []fieldView {
	if len(input) < bigInput {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var short, long []fieldView
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return nil
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil
		}
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") != nil {
			return nil
		}
		f := fieldView{Name: showValue(name, false), Value: showInput(b.String(), true), Size: size(len(raw))}
		if len(raw) > longField {
			f.Folded = true
			long = append(long, f)
		} else {
			short = append(short, f)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil
	}
	return append(short, long...)
}

// size says n bytes as a person reads it: "812 bytes", "4.0 KB", "1.2 MB".
func size(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}
