package policyfile

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/argschema"
)

// A tool's args_schema: a JSON Schema written in YAML, compiled once, when
// the file is read.

func (d *decoder) argsSchema(f entry, t *toolSpec) {
	n := d.deref(f.val, f.w)
	switch n.(type) {
	case nil, *ast.NullNode:
		return
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		d.errf(f.w, "args_schema must be a JSON Schema written as a mapping, such as {type: object, required: [query]}, not %s", describeNode(n))
		return
	}
	before := len(d.ps.list)
	v := d.toJSON(n, f.w)
	if len(d.ps.list) > before {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		d.errf(f.w, "args_schema cannot be turned into JSON: %v", err)
		return
	}
	schema, err := argschema.Compile(data)
	if err != nil {
		d.errf(f.w, "%s", strings.TrimPrefix(err.Error(), "argschema: "))
		return
	}
	t.argsSchema = opt[*argschema.Schema]{v: schema, set: true, at: f.w.at}
}

// toJSON converts n to the value encoding/json would decode from the same
// document, reporting what JSON cannot hold.
func (d *decoder) toJSON(n ast.Node, w where) any {
	if !d.enter(w) {
		return nil
	}
	defer d.leave()
	if !d.count1(w) {
		return nil
	}
	n = d.deref(n, w)
	here := w
	here.at = nodePos(n)
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode, *ast.MappingValueNode:
		m := map[string]any{}
		for _, e := range d.mapping(n, w) {
			// Field names inside a schema are the schema's, not toolsafe's.
			ew := w
			ew.path += "." + e.key
			ew.at = e.w.at
			m[e.key] = d.toJSON(e.val, ew)
		}
		return m
	case *ast.SequenceNode:
		s := make([]any, 0, len(x.Values))
		for i, v := range x.Values {
			iw := w
			iw.path += fmt.Sprintf("[%d]", i)
			s = append(s, d.toJSON(v, iw))
		}
		return s
	case *ast.StringNode:
		return x.Value
	case *ast.LiteralNode:
		if x.Value != nil {
			return x.Value.Value
		}
		return ""
	case *ast.BoolNode:
		return x.Value
	case *ast.IntegerNode:
		return json.Number(fmt.Sprint(x.Value))
	case *ast.FloatNode:
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			break
		}
		return x.Value
	}
	d.errf(here, "JSON Schema cannot hold %s", describeNode(n))
	return nil
}
