package policyfile

import (
	"slices"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
)

// The tools section: one entry per tool, by the tool's Name().

var (
	toolOnly   = []string{"dependency", "side_effects", "approval", "fallback", "args_schema"}
	toolFields = slices.Concat(policyFields, toolOnly)
)

// The values of side_effects and approval.
const (
	sideEffectsNone       = "none"
	sideEffectsIdempotent = "idempotent"
	sideEffectsNot        = "not_idempotent"

	approvalNone         = "none"
	approvalPerCall      = "per_call"
	approvalEveryAttempt = "every_attempt"
)

// toolSpec is one entry under tools.
type toolSpec struct {
	name string
	at   pos
	policySpec
	dependency  opt[string]
	sideEffects opt[string]
	approval    opt[string]
	fallback    opt[string] // the alternative tool
	fallbackOn  opt[[]middleware.Kind]
	argsSchema  opt[*argschema.Schema] // compiled once, when the file is read
}

func (d *decoder) tools(e entry, c *File) {
	for _, te := range d.mapping(e.val, e.w) {
		if te.key == "" {
			d.errf(te.w, "a tool needs a name: the Name() of the tools.Tool it configures")
			continue
		}
		t := &toolSpec{name: te.key, at: te.w.at}
		d.tool(te, t)
		c.tools[te.key] = t
		c.names = append(c.names, te.key)
	}
}

func (d *decoder) tool(e entry, t *toolSpec) {
	for _, f := range d.mapping(e.val, e.w) {
		if d.policyField(f, &t.policySpec) {
			continue
		}
		switch f.key {
		case "dependency":
			t.dependency = d.text(f.val, f.w)
			if t.dependency.set && t.dependency.v == "" {
				d.errf(f.w, "dependency is empty: name one of the dependencies, or leave the field out")
			}
		case "side_effects":
			t.sideEffects = d.enum(f.val, f.w, sideEffectsNone, sideEffectsIdempotent, sideEffectsNot)
		case "approval":
			t.approval = d.enum(f.val, f.w, approvalNone, approvalPerCall, approvalEveryAttempt)
		case "fallback":
			d.fallback(f, t)
		case "args_schema":
			d.argsSchema(f, t)
		default:
			if slices.Contains(depFields, f.key) {
				d.errf(f.w, "%s belongs to a dependency: declare it under dependencies, then set dependency: NAME in this tool", f.key)
				continue
			}
			d.unknown(f, toolFields)
		}
	}
}
