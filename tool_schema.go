package toolsafe

import (
	"encoding/json"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/internal/typednil"
)

var _ argschema.Schemer = (*Tool)(nil)

// ArgsSchema returns the JSON Schema of the tool's input, for a
// function-calling model (see package toolcall): the schema given with
// WithArgs, which toolsafe checks each input against;
// else the wrapped tool's own, when it has one (it implements
// argschema.Schemer, as the tools of an MCP server do); else nil. A Tool made
// by Wrap with invalid options has none. The caller must not modify it.
func (t *Tool) ArgsSchema() json.RawMessage {
	if t == nil {
		return nil
	}
	if s := t.cfg.args; s != nil {
		return s.Source()
	}
	if s, ok := t.inner.(argschema.Schemer); ok && !typednil.Is(s) {
		return s.ArgsSchema()
	}
	return nil
}
