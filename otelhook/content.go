package otelhook

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// ContentEnv is the environment variable that the OpenTelemetry GenAI
// instrumentations read to capture message content; New reads it once.
// "true", "SPAN_ONLY" and "SPAN_AND_EVENT" (any case) turn on recording of
// the tools' arguments and results on spans; "false", "NO_CONTENT",
// "EVENT_ONLY" (this Hook emits no content events) or unset leave it off.
// WithRecordArguments and WithRecordResults win over it.
const ContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// DefaultContentLimit is the most bytes of a tool's arguments or result
// recorded on a span, 16 KiB, unless WithContentLimit says otherwise.
const DefaultContentLimit = 16 << 10

// contentFromEnv reports whether the value of ContentEnv turns recording
// on.
func contentFromEnv() bool {
	switch strings.ToUpper(strings.TrimSpace(os.Getenv(ContentEnv))) {
	case "TRUE", "SPAN_ONLY", "SPAN_AND_EVENT":
		return true
	}
	return false
}

// maxContentDepth bounds the nesting of a structured value; deeper JSON is
// recorded as its text.
const maxContentDepth = 32

// contentValue is text, a tool's arguments or result, as a span attribute:
// a structured value (map, slice, string, number, bool, empty for null)
// when text is one JSON value whose objects repeat no key, else the text
// itself. Text longer than limit bytes is cut to at most limit bytes, on a
// character boundary, and recorded as a string; truncated says so.
func contentValue(text string, limit int) (v attribute.Value, truncated bool) {
	if len(text) > limit {
		cut := text[:limit]
		for len(cut) > 0 && !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		return attribute.StringValue(cut), true
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, ok := decodeValue(dec, 0)
	if !ok {
		return attribute.StringValue(text), false
	}
	if _, err := dec.Token(); err != io.EOF {
		return attribute.StringValue(text), false // more than one value
	}
	return v, false
}

// decodeValue reads one JSON value from dec as an attribute value; ok is
// false for anything that is not JSON, an object that repeats a key, or
// nesting deeper than maxContentDepth.
func decodeValue(dec *json.Decoder, depth int) (attribute.Value, bool) {
	if depth > maxContentDepth {
		return attribute.Value{}, false
	}
	tok, err := dec.Token()
	if err != nil {
		return attribute.Value{}, false
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return decodeObject(dec, depth)
		}
		if t == '[' {
			return decodeArray(dec, depth)
		}
		return attribute.Value{}, false
	case string:
		return attribute.StringValue(t), true
	case json.Number:
		if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return attribute.Int64Value(n), true
		}
		if f, err := strconv.ParseFloat(t.String(), 64); err == nil {
			return attribute.Float64Value(f), true
		}
		return attribute.StringValue(t.String()), true
	case bool:
		return attribute.BoolValue(t), true
	case nil:
		return attribute.Value{}, true // null: the empty value
	}
	return attribute.Value{}, false
}

func decodeObject(dec *json.Decoder, depth int) (attribute.Value, bool) {
	var kvs []attribute.KeyValue
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok || seen[key] {
			return attribute.Value{}, false
		}
		seen[key] = true
		v, ok := decodeValue(dec, depth+1)
		if !ok {
			return attribute.Value{}, false
		}
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: v})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return attribute.Value{}, false
	}
	return attribute.MapValue(kvs...), true
}

func decodeArray(dec *json.Decoder, depth int) (attribute.Value, bool) {
	var vs []attribute.Value
	for dec.More() {
		v, ok := decodeValue(dec, depth+1)
		if !ok {
			return attribute.Value{}, false
		}
		vs = append(vs, v)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return attribute.Value{}, false
	}
	return attribute.SliceValue(vs...), true
}
