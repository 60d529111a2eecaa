package canonical

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolsafe/toolsafe/middleware"
)

// CheckText reports whether input is text that toolsafe can compare with
// another call's: nil, or a *middleware.ArgsError (kind args-invalid) when
// input is not valid UTF-8 (JSON is UTF-8, RFC 8259 §8.1; Go's
// encoding/json would read "\xff" and "\xfe" both as U+FFFD), or is JSON
// with a lone surrogate escape such as "\ud800", which stands for no
// character (RFC 8259 §8.2; I-JSON, RFC 7493 §2.1, which RFC 8785 requires,
// forbids it) and which Go also reads as U+FFFD. The error's text names a
// byte offset, never the input's text. Cheap: one pass over input.
func CheckText(input string) error {
	if !utf8.ValidString(input) {
		return notUTF8(input)
	}
	if strings.Contains(input, `\u`) && json.Valid([]byte(input)) {
		return loneSurrogate(input)
	}
	return nil
}

func notUTF8(input string) error {
	at := 0
	for at < len(input) {
		r, n := utf8.DecodeRuneInString(input[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return middleware.InvalidArgs(fmt.Sprintf("the input is not UTF-8 text (a byte at offset %d is not UTF-8); send it as UTF-8 text, as JSON requires", at))
}

// loneSurrogate returns an *ArgsError for the first \u escape in input, a
// valid JSON text, that is half a surrogate pair without the other half.
// In valid JSON a backslash only starts an escape inside a string.
func loneSurrogate(input string) error {
	for i := 0; i < len(input); i++ {
		if input[i] != '\\' {
			continue
		}
		if input[i+1] != 'u' {
			i++ // a short escape: skip its letter (it may be a backslash)
			continue
		}
		u := hex4(input[i+2 : i+6])
		switch {
		case u >= 0xD800 && u <= 0xDBFF && i+12 <= len(input) && input[i+6] == '\\' && input[i+7] == 'u':
			if low := hex4(input[i+8 : i+12]); low >= 0xDC00 && low <= 0xDFFF {
				i += 11 // a whole pair
				continue
			}
			return surrogateError(i, u)
		case u >= 0xD800 && u <= 0xDFFF:
			return surrogateError(i, u)
		}
		i += 5
	}
	return nil
}

func hex4(s string) uint64 {
	u, _ := strconv.ParseUint(s, 16, 16) // valid JSON: four hex digits
	return u
}

func surrogateError(at int, u uint64) error {
	return middleware.InvalidArgs(fmt.Sprintf(`the input has \u%04x at offset %d, half of a UTF-16 surrogate pair without its other half, which stands for no character; send the text as UTF-8, or escape both halves of the pair`, u, at))
}
