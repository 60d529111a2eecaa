package policyfile

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// The decoder walks the YAML syntax tree itself, rather than unmarshalling
// into structs, so that it can report every problem of the file in one
// pass, each with its line and column, instead of stopping at the first.

type decoder struct {
	*yamlread.Reader[where]
	ps *problems
}

// entry is one field of a mapping.
type entry = yamlread.Entry[where]

func (d *decoder) errf(w where, format string, args ...any) {
	d.ps.add(problemAt(w, format, args...))
}

// unknown reports an unknown field, with the field meant if the name is
// close to one.
func (d *decoder) unknown(e entry, known []string) {
	if s := suggest(e.Key, known); s != "" {
		d.errf(e.Where, "unknown field %q%s", e.Key, s)
		return
	}
	d.errf(e.Where, "unknown field %q: the fields here are %s", e.Key, strings.Join(known, ", "))
}

// topFields are the fields at the top of the file.
var topFields = []string{"version", "defaults", "dependencies", "tools", "mcp_servers"}

// decodeFile parses data and decodes it, adding every problem to ps. It
// returns nil when the file could not be parsed at all.
func decodeFile(data []byte, ps *problems) *File {
	file, p := yamlread.Parse(data)
	if p != nil {
		ps.add(&Problem{Line: p.Line, Column: p.Column, Message: p.Message})
		return nil
	}
	c := &File{deps: map[string]*depSpec{}, tools: map[string]*toolSpec{}}
	var docs []*ast.DocumentNode
	for _, doc := range file.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return c
	}
	report := func(w where, message string) { ps.add(problemAt(w, "%s", message)) }
	d := &decoder{Reader: yamlread.NewReader(docs[0].Body, report), ps: ps}
	if len(docs) > 1 {
		d.errf(where{at: yamlread.NodePos(docs[1].Body)}, "the file holds %d YAML documents (separated by ---); put all policies in one", len(docs))
	}
	d.top(docs[0].Body, c)
	return c
}

func (d *decoder) top(n ast.Node, c *File) {
	for _, e := range d.Mapping(n, where{}) {
		switch e.Key {
		case "version":
			v := d.count(e.Value, e.Where, "")
			if v.set && v.v != 1 {
				d.errf(e.Where, "version %d is not known: this toolsafe reads version 1", v.v)
			}
			c.version = v.v
		case "defaults":
			d.defaults(e, &c.defaults)
		case "dependencies":
			d.dependencies(e, c)
		case "tools":
			d.tools(e, c)
		case "mcp_servers":
			d.mcpServers(e, c)
		default:
			switch {
			case strings.HasPrefix(e.Key, "x-"):
				// An extension field: a place for anchors, ignored.
			case slices.Contains(toolFields, e.Key):
				d.errf(e.Where, "%s is not a top-level field: put it under defaults (for every tool) or under a tool in tools", e.Key)
			case slices.Contains(depFields, e.Key):
				d.errf(e.Where, "%s is not a top-level field: put it under a dependency in dependencies", e.Key)
			default:
				d.unknown(e, topFields)
			}
		}
	}
}
