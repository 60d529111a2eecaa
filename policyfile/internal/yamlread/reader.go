package yamlread

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// Place is where a value is in the file, as the caller tracks it (a path
// of keys, say). A Reader reports every problem at a place, and moves
// places: to the position of a node, and into a key of a mapping.
type Place[P any] interface {
	// Pos is the position of the place; the zero Pos when it has none.
	Pos() Pos
	// At is the same place at position p.
	At(p Pos) P
	// Child is the place of the field key inside this one, at position p.
	Child(key string, p Pos) P
	// Name is the last key of the place, for messages ("timeout").
	Name() string
}

// Reader walks the syntax tree of one document: it follows anchors,
// aliases and tags, applies merge keys and decodes scalars, reporting each
// problem to the function given to NewReader. It visits MaxDepth levels,
// follows 10000 aliases and visits 1048576 values at most, so aliases
// cannot make a small file large. It is not safe for concurrent use.
type Reader[P Place[P]] struct {
	report   func(at P, message string)
	anchors  anchors
	depth    int
	tooDeep  bool // the depth problem was reported
	aliasUse int
	values   int
}

// NewReader returns a Reader of the document whose body is root, which
// reports each problem it finds with report.
func NewReader[P Place[P]](root ast.Node, report func(at P, message string)) *Reader[P] {
	return &Reader[P]{report: report, anchors: collectAnchors(root)}
}

func (r *Reader[P]) errf(at P, format string, args ...any) {
	r.report(at, fmt.Sprintf(format, args...))
}

// Entry is one field of a mapping.
type Entry[P any] struct {
	Key   string
	Value ast.Node
	Where P // the place of the key
}

// Mapping returns the fields of the mapping n, merge keys (<<) applied, or
// reports that n is not a mapping. A null is an empty mapping. Two fields
// with one name are reported by the parser.
func (r *Reader[P]) Mapping(n ast.Node, at P) []Entry[P] {
	if !r.Enter(at) {
		return nil
	}
	defer r.Leave()
	n = r.Deref(n, at)
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		if at.Pos() == (Pos{}) {
			at = at.At(NodePos(n))
		}
		r.errf(at, "must be a mapping of fields (such as {timeout: 2s}), not %s", Describe(n))
		return nil
	}
	var out, merged []Entry[P]
	seen := map[string]bool{}
	for _, mv := range values {
		if mv == nil || !r.Visit(at) {
			continue
		}
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			merged = append(merged, r.merge(mv, at)...)
			continue
		}
		key, ok := r.key(mv.Key, at)
		if !ok {
			continue
		}
		seen[key] = true
		out = append(out, Entry[P]{Key: key, Value: mv.Value, Where: at.Child(key, NodePos(mv.Key))})
	}
	for _, e := range merged {
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		out = append(out, Entry[P]{Key: e.Key, Value: e.Value, Where: at.Child(e.Key, e.Where.Pos())})
	}
	return out
}

// merge returns the fields that the merge key of mv brings: those of the
// mapping it names, or of each mapping of the list it names.
func (r *Reader[P]) merge(mv *ast.MappingValueNode, at P) []Entry[P] {
	src := r.Deref(mv.Value, at)
	srcs := []ast.Node{src}
	if seq, ok := src.(*ast.SequenceNode); ok {
		srcs = seq.Values
	}
	var merged []Entry[P]
	for _, s := range srcs {
		merged = append(merged, r.Mapping(s, at.At(NodePos(mv.Key)))...)
	}
	return merged
}

// key returns the text of a mapping key.
func (r *Reader[P]) key(k ast.Node, at P) (string, bool) {
	var n ast.Node = k
	if mk, ok := n.(*ast.MappingKeyNode); ok {
		n = mk.Value
	}
	n = r.Deref(n, at)
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		if s.Value != nil {
			return s.Value.Value, true
		}
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	case *ast.NullNode:
		return "", true
	}
	r.errf(at.At(NodePos(k)), "a key must be a plain name, not %s", Describe(n))
	return "", false
}

// Enter goes one level deeper into the file, and reports whether that is
// within MaxDepth; only then must Leave be called. The first level past it
// is reported at at.
func (r *Reader[P]) Enter(at P) bool {
	if r.depth >= MaxDepth {
		if !r.tooDeep {
			r.tooDeep = true
			r.errf(at, "the file nests deeper than %d levels here (an alias inside the anchor it names?)", MaxDepth)
		}
		return false
	}
	r.depth++
	return true
}

// Leave goes back up the level of the last Enter that returned true.
func (r *Reader[P]) Leave() { r.depth-- }

// Visit counts one value visited, and reports whether the budget of
// 1048576 values allows it; the first value past it is reported at at.
func (r *Reader[P]) Visit(at P) bool {
	r.values++
	if r.values == maxValues+1 {
		r.errf(at, "the file expands to more than %d values through its aliases: simplify its anchors", maxValues)
	}
	return r.values <= maxValues
}

// Deref follows anchors, aliases and tags from n to the node that holds
// the value. It returns nil, with a problem, for an alias that names no
// anchor or past the budget of 10000 aliases followed.
func (r *Reader[P]) Deref(n ast.Node, at P) ast.Node {
	for range MaxDepth {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.AliasNode:
			target := r.alias(x, at)
			if target == nil {
				return nil
			}
			n = target.Value
		default:
			return n
		}
	}
	r.errf(at, "too many anchors, aliases or tags in a row")
	return nil
}

// alias returns the anchor that a names, counting one alias followed; nil,
// with a problem, when there is none or the budget is spent.
func (r *Reader[P]) alias(a *ast.AliasNode, at P) *ast.AnchorNode {
	r.aliasUse++
	if r.aliasUse > maxAliasUses {
		if r.aliasUse == maxAliasUses+1 {
			r.errf(at, "the file follows aliases more than %d times: simplify its anchors", maxAliasUses)
		}
		return nil
	}
	target := r.anchors.of(a)
	if target == nil {
		name := ""
		if a.Value != nil {
			name = a.Value.GetToken().Value
		}
		r.errf(at.At(NodePos(a)), "alias *%s names no anchor defined before it (&%s)", name, name)
	}
	return target
}
