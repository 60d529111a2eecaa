package argschema

import (
	"bytes"
	"encoding/json"
)

// Schemer is a tool that describes its input with a JSON Schema: the
// arguments it takes, as one JSON object. A function-calling model is given
// that schema as the function's parameters (see package toolcall), and
// toolsafe checks input against it.
//
// toolsafe's *Tool implements it, and so do the tools of MCP servers
// (package mcptools, a module of its own).
type Schemer interface {
	// ArgsSchema returns the JSON Schema of the tool's input, as JSON
	// text, or nil when the tool has none. The caller must not modify it.
	ArgsSchema() json.RawMessage
}

// Source returns the schema s was compiled from, as compact JSON text (no
// insignificant whitespace). It returns nil for a nil s. The caller must not
// modify it.
func (s *Schema) Source() json.RawMessage {
	if s == nil {
		return nil
	}
	return s.source
}

// compact returns schema without insignificant whitespace, in a buffer of
// its own; schema as given (copied) if it cannot be compacted.
func compact(schema []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		return bytes.Clone(schema)
	}
	return b.Bytes()
}
