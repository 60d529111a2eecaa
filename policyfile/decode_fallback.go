package policyfile

import (
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// A tool's fallback: the alternative tool, and the failure kinds routed to
// it.

var fallbackKeys = []string{"tool", "on"}

// routable returns the kinds a fallback may be routed on: those of
// middleware.Kinds that fallback.NeverRouted allows, the default ones
// (fallback.DefaultKinds) first.
func routable() []middleware.Kind {
	ks := fallback.DefaultKinds()
	for _, k := range middleware.Kinds() {
		if !fallback.NeverRouted(k) && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

func (d *decoder) fallback(f entry, t *toolSpec) {
	n := d.Deref(f.Value, f.Where)
	switch n.(type) {
	case nil, *ast.NullNode:
		return
	case *ast.StringNode, *ast.LiteralNode:
		t.fallback = d.text(n, f.Where)
	default:
		for _, g := range d.Mapping(n, f.Where) {
			switch g.Key {
			case "tool":
				t.fallback = d.text(g.Value, g.Where)
			case "on":
				t.fallbackOn = d.kinds(g.Value, g.Where)
			default:
				d.unknown(g, fallbackKeys)
			}
		}
		if !t.fallback.set {
			d.errf(f.Where, "fallback needs a tool: the name of the tool to call when this one fails, as in fallback: {tool: archive_search}")
			return
		}
	}
	if t.fallback.set && t.fallback.v == "" {
		d.errf(f.Where, "fallback names no tool: give the name of the tool to call when this one fails")
		t.fallback.set = false
	}
}

// kinds decodes the failure kinds of "on": a list of them, or one.
func (d *decoder) kinds(n ast.Node, w where) opt[[]middleware.Kind] {
	n = d.Deref(n, w)
	var items []ast.Node
	switch s := n.(type) {
	case nil, *ast.NullNode:
		return opt[[]middleware.Kind]{}
	case *ast.SequenceNode:
		items = s.Values
	default:
		items = []ast.Node{n}
	}
	ok := routable()
	o := opt[[]middleware.Kind]{set: true, at: w.at, v: []middleware.Kind{}}
	for i, item := range items {
		iw := w.index(i, yamlread.NodePos(item))
		s := d.text(item, iw)
		if !s.set {
			continue
		}
		k := middleware.Kind(s.v)
		switch {
		case slices.Contains(ok, k):
			if !slices.Contains(o.v, k) {
				o.v = append(o.v, k)
			}
		case fallback.NeverRouted(k):
			d.errf(iw, "%s never falls back: a pause, a denial, a bad argument or a cancellation is not routed around; use some of %s", k, kindList(ok))
		default:
			d.errf(iw, "%q is not a failure kind: use some of %s%s", s.v, kindList(ok), suggest(s.v, kindStrings(ok)))
		}
	}
	if len(o.v) == 0 && len(items) == 0 {
		d.errf(w, "on is empty: list the failure kinds that route to the fallback, or leave it out for %s", andList(kindStrings(fallback.DefaultKinds())))
	}
	return o
}

func kindStrings(ks []middleware.Kind) []string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return s
}

func kindList(ks []middleware.Kind) string { return strings.Join(kindStrings(ks), ", ") }

// andList writes "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
