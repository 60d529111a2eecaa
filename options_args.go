package toolsafe

import (
	"fmt"

	"github.com/toolsafe/toolsafe/argschema"
)

// WithArgsSchema checks each call's input against schema (a JSON Schema as
// JSON text; see package argschema) before anything else runs: an invalid
// input ends the call as args-invalid, no attempt made, and the model is told
// which argument is wrong. An invalid schema is a configuration error; nil
// or empty removes the check, the tool's own schema included (see New). A
// tool has one schema: a second WithArgsSchema, or WithArgs beside it, is
// refused by New (ErrConfig), as a guard is set once.
func WithArgsSchema(schema []byte) Option {
	return optionFunc(func(c *config) {
		if !c.set(guardArgs, "WithArgsSchema") {
			return
		}
		if len(schema) == 0 {
			c.args, c.argsSet = nil, true
			return
		}
		s, err := argschema.Compile(schema)
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("args schema: %w", err))
			return
		}
		c.args, c.argsSet = s, true
	})
}

// WithArgs is WithArgsSchema for a schema compiled already with
// argschema.Compile, so that one compiled schema can serve many tools (the
// policies file compiles each schema once, when the file is read). A nil s
// removes the check. Given twice, or beside WithArgsSchema, it is refused
// by New (ErrConfig), as a guard is set once.
func WithArgs(s *argschema.Schema) Option {
	return optionFunc(func(c *config) {
		if c.set(guardArgs, "WithArgs") {
			c.args, c.argsSet = s, true
		}
	})
}
