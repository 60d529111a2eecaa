package policyfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// The decoder walks the YAML syntax tree itself, rather than unmarshalling
// into structs, so that it can report every problem of the file in one
// pass, each with its line and column, instead of stopping at the first.
// This file holds what every section of the file needs: parsing, places,
// mappings, anchors and aliases.

const (
	// maxAliasUses bounds how many times aliases are followed, so that a
	// file cannot expand exponentially ("billion laughs").
	maxAliasUses = 10000
	// maxValues bounds the values the decoder visits, aliases followed, so
	// that a few aliases of one large anchor cannot expand either.
	maxValues = 1 << 20
)

// pos is a place in the file, 1-based; the zero pos is no place.
type pos struct{ line, col int }

// opt is a field that may be left out, with where it was set.
type opt[T any] struct {
	v   T
	set bool
	at  pos
}

func (o opt[T]) or(def opt[T]) opt[T] {
	if o.set {
		return o
	}
	return def
}

// where is the place of a value, for problems.
type where struct {
	path  string // "tools.fetch_invoice.timeout"
	tool  string
	dep   string
	field string // within its tool, dependency or defaults
	at    pos
}

// child is the place of the field key inside w, at p.
func (w where) child(key string, p pos) where {
	c := w
	c.at = p
	if c.path == "" {
		c.path = key
	} else {
		c.path += "." + key
	}
	switch {
	case w.path == "":
		c.field = key
		if key == "defaults" || key == "dependencies" || key == "tools" {
			c.field = "" // a section, not a field
		}
	case w.path == "tools":
		c.tool, c.field = key, ""
	case w.path == "dependencies":
		c.dep, c.field = key, ""
	case w.field == "":
		c.field = key
	default:
		c.field += "." + key
	}
	return c
}

// index is the place of item i of the list at w.
func (w where) index(i int, p pos) where {
	c := w
	c.at = p
	c.path += fmt.Sprintf("[%d]", i)
	c.field += fmt.Sprintf("[%d]", i)
	return c
}

// problemAt is a problem at w.
func problemAt(w where, format string, args ...any) *Problem {
	return &Problem{Path: w.path, Tool: w.tool, Dependency: w.dep, Field: w.field,
		Line: w.at.line, Column: w.at.col, Message: fmt.Sprintf(format, args...)}
}

type decoder struct {
	ps       *problems
	anchors  map[string][]*ast.AnchorNode // by name, in the order of the file
	depth    int
	tooDeep  bool // the depth problem was reported
	aliasUse int
	values   int
}

func (d *decoder) errf(w where, format string, args ...any) {
	d.ps.add(problemAt(w, format, args...))
}

// parseYAML checks data against the limits of the file, then parses it. It
// returns the problem that stopped it, or the syntax tree. A panic of the
// parser on hostile input becomes a problem too: bad input gets a problem,
// never a panic.
func parseYAML(data []byte) (f *ast.File, p *Problem) {
	defer func() {
		if r := recover(); r != nil {
			f, p = nil, &Problem{Message: fmt.Sprintf("the file is not valid YAML: the YAML parser failed on this input (%v)", r)}
		}
	}()
	if p := scanLimits(data); p != nil {
		return nil, p
	}
	tokens := lexer.Tokenize(string(data))
	if p := tokenLimits(tokens); p != nil {
		return nil, p
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		p := &Problem{Message: "the file is not valid YAML: " + err.Error()}
		var ye yaml.Error
		if errors.As(err, &ye) {
			p.Message = "the file is not valid YAML: " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Column = tk.Position.Line, tk.Position.Column
			}
		}
		return nil, p
	}
	return f, nil
}

// collectAnchors records every anchor under n by name, in the order of the
// file, so that anchorFor can find the one an alias names.
func (d *decoder) collectAnchors(n ast.Node) {
	ast.Walk(anchorCollector(d.anchors), n)
	for _, list := range d.anchors {
		slices.SortStableFunc(list, func(a, b *ast.AnchorNode) int { return cmp.Compare(offset(a), offset(b)) })
	}
}

type anchorCollector map[string][]*ast.AnchorNode

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		name := an.Name.GetToken().Value
		a[name] = append(a[name], an)
	}
	return a
}

// offset is where n starts in the file, in bytes; -1 when unknown.
func offset(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Offset
	}
	return -1
}

// anchorFor returns the anchor an alias refers to: the last one of its name
// defined before it.
func (d *decoder) anchorFor(a *ast.AliasNode) *ast.AnchorNode {
	if a.Value == nil || a.Value.GetToken() == nil || offset(a) < 0 {
		return nil
	}
	list := d.anchors[a.Value.GetToken().Value]
	// The anchors before the alias are a prefix of list.
	i, _ := slices.BinarySearchFunc(list, offset(a), func(an *ast.AnchorNode, at int) int {
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

// entry is one field of a mapping.
type entry struct {
	key string
	val ast.Node
	w   where // the place of the key
}

// mapping returns the fields of the mapping n (merge keys applied), or
// reports that n is not a mapping. A null is an empty mapping. Two fields
// with one name are reported by the parser.
func (d *decoder) mapping(n ast.Node, w where) []entry {
	if !d.enter(w) {
		return nil
	}
	defer d.leave()
	n = d.deref(n, w)
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		if w.at == (pos{}) {
			w.at = nodePos(n)
		}
		d.errf(w, "must be a mapping of fields (such as {timeout: 2s}), not %s", describeNode(n))
		return nil
	}
	var out, merged []entry
	seen := map[string]bool{}
	for _, mv := range values {
		if mv == nil || !d.count1(w) {
			continue
		}
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			src := d.deref(mv.Value, w)
			srcs := []ast.Node{src}
			if seq, ok := src.(*ast.SequenceNode); ok {
				srcs = seq.Values
			}
			for _, s := range srcs {
				mw := w
				mw.at = nodePos(mv.Key)
				merged = append(merged, d.mapping(s, mw)...)
			}
			continue
		}
		key, ok := d.key(mv.Key, w)
		if !ok {
			continue
		}
		at := nodePos(mv.Key)
		seen[key] = true
		out = append(out, entry{key: key, val: mv.Value, w: w.child(key, at)})
	}
	for _, e := range merged {
		if seen[e.key] {
			continue
		}
		seen[e.key] = true
		out = append(out, entry{key: e.key, val: e.val, w: w.child(e.key, e.w.at)})
	}
	return out
}

// key returns the text of a mapping key.
func (d *decoder) key(k ast.Node, w where) (string, bool) {
	var n ast.Node = k
	if mk, ok := n.(*ast.MappingKeyNode); ok {
		n = mk.Value
	}
	n = d.deref(n, w)
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
	kw := w
	kw.at = nodePos(k)
	d.errf(kw, "a key must be a plain name, not %s", describeNode(n))
	return "", false
}

// unknown reports an unknown field, with the field meant if the name is
// close to one.
func (d *decoder) unknown(e entry, known []string) {
	if s := suggest(e.key, known); s != "" {
		d.errf(e.w, "unknown field %q%s", e.key, s)
		return
	}
	d.errf(e.w, "unknown field %q: the fields here are %s", e.key, strings.Join(known, ", "))
}

// enter goes one level deeper into the file, and reports whether that is
// within MaxDepth; only then must leave be called. The first level past it
// is reported at w.
func (d *decoder) enter(w where) bool {
	if d.depth >= MaxDepth {
		if !d.tooDeep {
			d.tooDeep = true
			d.errf(w, "the file nests deeper than %d levels here (an alias inside the anchor it names?)", MaxDepth)
		}
		return false
	}
	d.depth++
	return true
}

func (d *decoder) leave() { d.depth-- }

// count1 counts one value visited, and reports whether the budget of
// values allows it; the first value past it is reported at w.
func (d *decoder) count1(w where) bool {
	d.values++
	if d.values == maxValues+1 {
		d.errf(w, "the file expands to more than %d values through its aliases: simplify its anchors", maxValues)
	}
	return d.values <= maxValues
}

// deref follows anchors, aliases and tags to the node that holds the value.
func (d *decoder) deref(n ast.Node, w where) ast.Node {
	for range MaxDepth {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.AliasNode:
			d.aliasUse++
			if d.aliasUse > maxAliasUses {
				if d.aliasUse == maxAliasUses+1 {
					d.errf(w, "the file follows aliases more than %d times: simplify its anchors", maxAliasUses)
				}
				return nil
			}
			target := d.anchorFor(x)
			if target == nil {
				name := ""
				if x.Value != nil {
					name = x.Value.GetToken().Value
				}
				aw := w
				aw.at = nodePos(x)
				d.errf(aw, "alias *%s names no anchor defined before it (&%s)", name, name)
				return nil
			}
			n = target.Value
		default:
			return n
		}
	}
	d.errf(w, "too many anchors, aliases or tags in a row")
	return nil
}

// nodePos is where n starts.
func nodePos(n ast.Node) pos {
	switch x := n.(type) {
	case nil:
		return pos{}
	case *ast.DocumentNode:
		return nodePos(x.Body)
	case *ast.MappingNode:
		if !x.IsFlowStyle && len(x.Values) > 0 {
			return nodePos(x.Values[0])
		}
	case *ast.MappingValueNode:
		return nodePos(x.Key)
	case *ast.MappingKeyNode:
		if x.Start == nil {
			return nodePos(x.Value)
		}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// describeNode names the kind of value n holds, for messages.
func describeNode(n ast.Node) string {
	switch x := n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return "the text " + quoteShort(x.Value)
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

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
