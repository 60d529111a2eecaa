package policyfile

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// topFields are the fields at the top of the file.
var topFields = []string{"version", "defaults", "dependencies", "tools"}

// decodeFile parses data and decodes it, adding every problem to ps. It
// returns nil when the file could not be parsed at all.
func decodeFile(data []byte, ps *problems) *File {
	file, p := parseYAML(data)
	if p != nil {
		ps.add(p)
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
	d := &decoder{ps: ps, anchors: map[string][]*ast.AnchorNode{}}
	if len(docs) > 1 {
		d.errf(where{at: nodePos(docs[1].Body)}, "the file holds %d YAML documents (separated by ---); put all policies in one", len(docs))
	}
	d.collectAnchors(docs[0].Body)
	d.top(docs[0].Body, c)
	return c
}

func (d *decoder) top(n ast.Node, c *File) {
	for _, e := range d.mapping(n, where{}) {
		switch e.key {
		case "version":
			v := d.count(e.val, e.w, "")
			if v.set && v.v != 1 {
				d.errf(e.w, "version %d is not known: this toolsafe reads version 1", v.v)
			}
			c.version = v.v
		case "defaults":
			d.defaults(e, &c.defaults)
		case "dependencies":
			d.dependencies(e, c)
		case "tools":
			d.tools(e, c)
		default:
			switch {
			case strings.HasPrefix(e.key, "x-"):
				// An extension field: a place for anchors, ignored.
			case slices.Contains(toolFields, e.key):
				d.errf(e.w, "%s is not a top-level field: put it under defaults (for every tool) or under a tool in tools", e.key)
			case slices.Contains(depFields, e.key):
				d.errf(e.w, "%s is not a top-level field: put it under a dependency in dependencies", e.key)
			default:
				d.unknown(e, topFields)
			}
		}
	}
}
