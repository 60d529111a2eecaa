package yamlread

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Pos is a place in the file, 1-based; the zero Pos is no place.
type Pos struct{ Line, Col int }

// NodePos is where n starts; the zero Pos when n is nil or has no
// position.
func NodePos(n ast.Node) Pos {
	switch x := n.(type) {
	case nil:
		return Pos{}
	case *ast.DocumentNode:
		return NodePos(x.Body)
	case *ast.MappingNode:
		if !x.IsFlowStyle && len(x.Values) > 0 {
			return NodePos(x.Values[0])
		}
	case *ast.MappingValueNode:
		return NodePos(x.Key)
	case *ast.MappingKeyNode:
		if x.Start == nil {
			return NodePos(x.Value)
		}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{}
	}
	return Pos{tk.Position.Line, tk.Position.Column}
}

// offset is where n starts in the file, in bytes; -1 when unknown.
func offset(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Offset
	}
	return -1
}

// Describe names the kind of value n holds, for messages: "null", "a
// list", the text "abc" (cut at 40 characters), the number 3.
func Describe(n ast.Node) string {
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return "the text " + QuoteShort(x.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.BoolNode:
		return strconv.FormatBool(x.Value)
	case *ast.IntegerNode, *ast.FloatNode:
		return "the number " + x.GetToken().Value
	case *ast.InfinityNode:
		return "infinity"
	case *ast.NanNode:
		return "NaN"
	case *ast.AliasNode:
		return "an alias"
	}
	return "a " + strings.ToLower(n.Type().String())
}

// QuoteShort quotes s as strconv.Quote does, cut to its first 40
// characters and an ellipsis when longer.
func QuoteShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
