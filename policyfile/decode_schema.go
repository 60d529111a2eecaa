package policyfile

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// A tool's args_schema: a JSON Schema written in YAML, compiled once, when
// the file is read.

func (d *decoder) argsSchema(f entry, t *toolSpec) {
	n := d.Deref(f.Value, f.Where)
	switch n.(type) {
	case nil, *ast.NullNode:
		return
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		d.errf(f.Where, "args_schema must be a JSON Schema written as a mapping, such as {type: object, required: [query]}, not %s", yamlread.Describe(n))
		return
	}
	before := len(d.ps.list)
	v := d.toJSON(n, f.Where)
	if len(d.ps.list) > before {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		d.errf(f.Where, "args_schema cannot be turned into JSON: %v", err)
		return
	}
	schema, err := argschema.Compile(data)
	if err != nil {
		d.errf(f.Where, "%s", strings.TrimPrefix(err.Error(), "argschema: "))
		return
	}
	t.argsSchema = opt[*argschema.Schema]{v: schema, set: true, at: f.Where.at}
}

// toJSON converts n to the value encoding/json would decode from the same
// document, reporting what JSON cannot hold.
func (d *decoder) toJSON(n ast.Node, w where) any {
	if !d.Enter(w) {
		return nil
	}
	defer d.Leave()
	if !d.Visit(w) {
		return nil
	}
	n = d.Deref(n, w)
	here := w
	here.at = yamlread.NodePos(n)
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode, *ast.MappingValueNode:
		m := map[string]any{}
		for _, e := range d.Mapping(n, w) {
			// Field names inside a schema are the schema's, not toolsafe's.
			ew := w
			ew.path += "." + e.Key
			ew.at = e.Where.at
			m[e.Key] = d.toJSON(e.Value, ew)
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
	d.errf(here, "JSON Schema cannot hold %s", yamlread.Describe(n))
	return nil
}
