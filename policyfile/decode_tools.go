package policyfile

import (
	"slices"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// The tools section: one entry per tool, by the tool's Name().

var (
	toolOnly   = []string{"dependency", "side_effects", "approval", "approvers", "approvals", "fallback", "args_schema"}
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
	at   yamlread.Pos
	policySpec
	dependency  opt[string]
	sideEffects opt[string]
	approval    opt[string]
	fallback    opt[string] // the alternative tool
	fallbackOn  opt[[]middleware.Kind]
	argsSchema  opt[*argschema.Schema] // compiled once, when the file is read
	approvers   opt[[]string]          // the approver groups
	approvals   opt[int]               // how many people approve
}

func (d *decoder) tools(e entry, c *File) {
	for _, te := range d.Mapping(e.Value, e.Where) {
		if te.Key == "" {
			d.errf(te.Where, "a tool needs a name: the Name() of the tools.Tool it configures")
			continue
		}
		t := &toolSpec{name: te.Key, at: te.Where.at}
		d.tool(te, t)
		c.tools[te.Key] = t
		c.names = append(c.names, te.Key)
	}
}

func (d *decoder) tool(e entry, t *toolSpec) {
	for _, f := range d.Mapping(e.Value, e.Where) {
		if d.policyField(f, &t.policySpec) {
			continue
		}
		switch f.Key {
		case "dependency":
			t.dependency = d.text(f.Value, f.Where)
			if t.dependency.set && t.dependency.v == "" {
				d.errf(f.Where, "dependency is empty: name one of the dependencies, or leave the field out")
			}
		case "side_effects":
			t.sideEffects = d.enum(f.Value, f.Where, sideEffectsNone, sideEffectsIdempotent, sideEffectsNot)
		case "approval":
			t.approval = d.enum(f.Value, f.Where, approvalNone, approvalPerCall, approvalEveryAttempt)
		case "approvers":
			t.approvers = d.groups(f.Value, f.Where)
		case "approvals":
			d.approvalsCount(f, t)
		case "fallback":
			d.fallback(f, t)
		case "args_schema":
			d.argsSchema(f, t)
		default:
			if slices.Contains(depFields, f.Key) {
				d.errf(f.Where, "%s belongs to a dependency: declare it under dependencies, then set dependency: NAME in this tool", f.Key)
				continue
			}
			d.unknown(f, toolFields)
		}
	}
}
