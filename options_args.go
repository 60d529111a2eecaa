package toolsafe

import (
	"fmt"

	"github.com/toolsafe/toolsafe/argschema"
)

// WithArgsSchema checks each call's input against schema, a JSON Schema as
// JSON text, inside surface and before anything else runs (see package
// argschema for the drafts supported and the rules). The input is the tool's
// arguments as one JSON object. An invalid input ends the call as
// args-invalid with no attempt made, and the model is told which argument
// is wrong and how:
//
//	search was not called: the input is invalid: argument "query" is
//	missing. Fix the input and call it again.
//
// An invalid schema is a configuration error (New returns it). A later
// WithArgsSchema replaces an earlier one; nil or empty schema removes it.
func WithArgsSchema(schema []byte) Option {
	return optionFunc(func(c *config) {
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
// removes the check.
func WithArgs(s *argschema.Schema) Option {
	return optionFunc(func(c *config) {
		c.args, c.argsSet = s, true
	})
}
