package toolsafe

import (
	"fmt"

	"github.com/toolsafe/toolsafe/argschema"
)

// WithArgs checks each call's input against s (compile it once with
// argschema.Compile, so that one schema can serve many tools, as the
// policies file does) before anything else runs: an invalid input ends the
// call as args-invalid, no attempt made, and the model is told which
// argument is wrong. Arguments a person changed before approving a call
// (approval.Reply's Input) are checked against s as well before they run:
// changes that do not fit end the call as args-invalid, the tool not
// called. A nil s removes the check, the tool's own schema
// included (see New). It is the one way to give a tool its schema. A tool
// has one schema: a second WithArgs, or the deprecated WithArgsSchema
// beside it, is refused by New (ErrConfig), as a guard is set once.
func WithArgs(s *argschema.Schema) Option {
	return optionFunc(func(c *config) { c.setArgs("WithArgs", s, nil) })
}

// setArgs records s as the tool's schema, set by the option called name,
// once; err is why the schema could not be compiled.
func (c *config) setArgs(name string, s *argschema.Schema, err error) {
	if !c.set(guardArgs, name) {
		return
	}
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("args schema: %w", err))
		return
	}
	c.args, c.argsSet = s, true
}

// WithArgsSchema is WithArgs for a schema given as JSON text, compiled when
// the option is made: an invalid schema is a configuration error; nil or
// empty removes the check, the tool's own schema included.
// Given twice, or beside WithArgs, it is refused by New (ErrConfig).
//
// Deprecated: compile the schema with argschema.Compile, which says what is
// wrong with it where you give it, and pass it to WithArgs.
func WithArgsSchema(schema []byte) Option {
	var s *argschema.Schema
	var err error
	if len(schema) > 0 {
		s, err = argschema.Compile(schema)
	}
	return optionFunc(func(c *config) { c.setArgs("WithArgsSchema", s, err) })
}
