package yamlread

import (
	"cmp"
	"slices"

	"github.com/goccy/go-yaml/ast"
)

// anchors holds every anchor of a document by name, in the order of the
// file, so that an alias finds the one it names.
type anchors map[string][]*ast.AnchorNode

// collectAnchors records every anchor under n.
func collectAnchors(n ast.Node) anchors {
	a := anchors{}
	ast.Walk(a, n)
	for _, list := range a {
		slices.SortStableFunc(list, func(x, y *ast.AnchorNode) int { return cmp.Compare(offset(x), offset(y)) })
	}
	return a
}

// Visit records n if it is an anchor; it makes anchors an ast.Visitor.
func (a anchors) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		name := an.Name.GetToken().Value
		a[name] = append(a[name], an)
	}
	return a
}

// of returns the anchor alias refers to: the last one of its name defined
// before it; nil when there is none.
func (a anchors) of(alias *ast.AliasNode) *ast.AnchorNode {
	if alias.Value == nil || alias.Value.GetToken() == nil || offset(alias) < 0 {
		return nil
	}
	list := a[alias.Value.GetToken().Value]
	// The anchors before the alias are a prefix of list.
	i, _ := slices.BinarySearchFunc(list, offset(alias), func(an *ast.AnchorNode, at int) int {
		if offset(an) < at {
			return -1
		}
		return 1
	})
	if i == 0 || offset(list[i-1]) < 0 {
		return nil
	}
	return list[i-1]
}
