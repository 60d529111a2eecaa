package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
)

// The decoder walks the YAML syntax tree itself, rather than unmarshalling
// into structs, so that it can report every problem of the file in one
// pass, each with its line and column, instead of stopping at the first.

const (
	// maxDepth bounds the nesting of the file, aliases included, so that an
	// alias that contains itself ends with an error.
	maxDepth = 64
	// maxAliasUses bounds how many times aliases are followed, so that a
	// file cannot expand exponentially ("billion laughs").
	maxAliasUses = 10000
)

// The fields at each level of the file.
var (
	topFields     = []string{"version", "defaults", "dependencies", "tools"}
	policyFields  = []string{"retries", "timeout", "deadline", "backoff", "tracing"}
	toolOnly      = []string{"dependency", "side_effects", "approval", "fallback", "args_schema"}
	toolFields    = slices.Concat(policyFields, toolOnly)
	backoffFields = []string{"base", "max", "multiplier", "jitter"}
	depFields     = []string{"breaker", "concurrency", "max_wait", "retry_budget"}
	breakerFields = []string{"failures", "window", "delay", "probes"}
	fallbackKeys  = []string{"tool", "on"}
)

// fallbackKinds are the kinds a fallback may be routed on; the others never
// are (fallback.NeverRouted).
var fallbackKinds = []middleware.Kind{
	middleware.KindFailed, middleware.KindTimeout, middleware.KindCircuitOpen,
	middleware.KindToolError, middleware.KindBusy, middleware.KindBudget, middleware.KindPanic,
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

type decoder struct {
	ps       *problems
	anchors  map[string][]*ast.AnchorNode
	depth    int
	aliasUse int
}

func (d *decoder) errf(w where, format string, args ...any) {
	d.ps.add(&Problem{
		Path:       w.path,
		Tool:       w.tool,
		Dependency: w.dep,
		Field:      w.field,
		Line:       w.at.line,
		Column:     w.at.col,
		Message:    fmt.Sprintf(format, args...),
	})
}

// decodeConfig parses data and decodes it, adding every problem to ps. It
// returns nil when the file could not be parsed at all.
func decodeConfig(data []byte, ps *problems) (c *File) {
	file, err := parseYAML(data)
	if err != nil {
		var ye yaml.Error
		p := &Problem{Message: "the file is not valid YAML: " + err.Error()}
		if errors.As(err, &ye) {
			p.Message = "the file is not valid YAML: " + ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Column = tk.Position.Line, tk.Position.Column
			}
		}
		ps.add(p)
		return nil
	}
	c = &File{deps: map[string]*depSpec{}, tools: map[string]*toolSpec{}}
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
	ast.Walk(anchorCollector(d.anchors), docs[0].Body)
	d.top(docs[0].Body, c)
	return c
}

// parseYAML parses data, turning a panic of the parser on hostile input into
// an error: bad input gets an error, never a panic.
func parseYAML(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed on this input (%v)", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

type anchorCollector map[string][]*ast.AnchorNode

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		name := an.Name.GetToken().Value
		a[name] = append(a[name], an)
	}
	return a
}

func (d *decoder) top(n ast.Node, c *File) {
	w := where{}
	for _, e := range d.mapping(n, w) {
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
			for _, de := range d.mapping(e.val, e.w) {
				if de.key == "" {
					d.errf(de.w, "a dependency needs a name")
					continue
				}
				dep := &depSpec{name: de.key, at: de.w.at}
				d.dependency(de, dep)
				c.deps[de.key] = dep
				c.depNames = append(c.depNames, de.key)
			}
		case "tools":
			for _, te := range d.mapping(e.val, e.w) {
				if te.key == "" {
					d.errf(te.w, "a tool needs a name: the Name() of the tools.Tool it configures")
					continue
				}
				t := &toolSpec{name: te.key, at: te.w.at}
				d.tool(te, t)
				c.tools[te.key] = t
				c.names = append(c.names, te.key)
			}
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

func (d *decoder) defaults(e entry, p *policySpec) {
	for _, f := range d.mapping(e.val, e.w) {
		if d.policyField(f, p) {
			continue
		}
		switch {
		case slices.Contains(toolOnly, f.key):
			d.errf(f.w, "%s is set per tool, not in defaults: move it under the tools that need it", f.key)
		case slices.Contains(depFields, f.key):
			d.errf(f.w, "%s belongs to a dependency: declare one under dependencies and name it in each tool's dependency field", f.key)
		default:
			d.unknown(f, policyFields)
		}
	}
}

// policyField decodes a field shared by defaults and tools; it reports
// whether f was one.
func (d *decoder) policyField(f entry, p *policySpec) bool {
	switch f.key {
	case "retries":
		p.retries = d.count(f.val, f.w, "use 0 for a single attempt, 3 for up to 4 attempts")
	case "timeout":
		p.timeout = d.duration(f.val, f.w, "use 0 for no limit per attempt")
	case "deadline":
		p.deadline = d.duration(f.val, f.w, "use 0 for no deadline")
	case "tracing":
		p.tracing = d.boolean(f.val, f.w)
	case "backoff":
		for _, b := range d.mapping(f.val, f.w) {
			switch b.key {
			case "base":
				p.base = d.duration(b.val, b.w, "use 0 for no wait")
			case "max":
				p.max = d.duration(b.val, b.w, "use 0 for no cap")
			case "multiplier":
				p.multiplier = d.number(b.val, b.w)
				if p.multiplier.set && p.multiplier.v < 0 {
					d.errf(b.w, "multiplier %v is negative: use 1 for a constant wait, 2 to double it each time", p.multiplier.v)
				}
			case "jitter":
				p.jitter = d.number(b.val, b.w)
				if p.jitter.set && (p.jitter.v < 0 || p.jitter.v > 1) {
					d.errf(b.w, "jitter %v is outside [0, 1]: it is the largest fraction added to a wait, 0.25 turns 1s into 1s..1.25s", p.jitter.v)
				}
			default:
				d.unknown(b, backoffFields)
			}
		}
	default:
		return false
	}
	return true
}

func (d *decoder) tool(e entry, t *toolSpec) {
	for _, f := range d.mapping(e.val, e.w) {
		if d.policyField(f, &t.policySpec) {
			continue
		}
		switch f.key {
		case "dependency":
			t.dependency = d.text(f.val, f.w)
			if t.dependency.set && t.dependency.v == "" {
				d.errf(f.w, "dependency is empty: name one of the dependencies, or leave the field out")
			}
		case "side_effects":
			t.sideEffects = d.enum(f.val, f.w, sideEffectsNone, sideEffectsIdempotent, sideEffectsNot)
		case "approval":
			t.approval = d.enum(f.val, f.w, approvalNone, approvalPerCall, approvalEveryAttempt)
		case "fallback":
			d.fallback(f, t)
		case "args_schema":
			d.argsSchema(f, t)
		default:
			if slices.Contains(depFields, f.key) {
				d.errf(f.w, "%s belongs to a dependency: declare it under dependencies, then set dependency: NAME in this tool", f.key)
				continue
			}
			d.unknown(f, toolFields)
		}
	}
}

func (d *decoder) fallback(f entry, t *toolSpec) {
	n := d.deref(f.val, f.w)
	switch n.(type) {
	case nil, *ast.NullNode:
		return
	case *ast.StringNode, *ast.LiteralNode:
		t.fallback = d.text(n, f.w)
	default:
		for _, g := range d.mapping(n, f.w) {
			switch g.key {
			case "tool":
				t.fallback = d.text(g.val, g.w)
			case "on":
				t.fallbackOn = d.kinds(g.val, g.w)
			default:
				d.unknown(g, fallbackKeys)
			}
		}
		if !t.fallback.set {
			d.errf(f.w, "fallback needs a tool: the name of the tool to call when this one fails, as in fallback: {tool: archive_search}")
			return
		}
	}
	if t.fallback.set && t.fallback.v == "" {
		d.errf(f.w, "fallback names no tool: give the name of the tool to call when this one fails")
		t.fallback.set = false
	}
}

func (d *decoder) kinds(n ast.Node, w where) opt[[]middleware.Kind] {
	n = d.deref(n, w)
	var items []ast.Node
	switch s := n.(type) {
	case nil, *ast.NullNode:
		return opt[[]middleware.Kind]{}
	case *ast.SequenceNode:
		items = s.Values
	default:
		items = []ast.Node{n}
	}
	o := opt[[]middleware.Kind]{set: true, at: w.at, v: []middleware.Kind{}}
	for i, item := range items {
		iw := w
		iw.at = nodePos(item)
		iw.path += fmt.Sprintf("[%d]", i)
		iw.field += fmt.Sprintf("[%d]", i)
		s := d.text(item, iw)
		if !s.set {
			continue
		}
		k := middleware.Kind(s.v)
		switch {
		case slices.Contains(fallbackKinds, k):
			if !slices.Contains(o.v, k) {
				o.v = append(o.v, k)
			}
		case fallback.NeverRouted(k):
			d.errf(iw, "%s never falls back: a pause, a denial, a bad argument or a cancellation is not routed around; use some of %s", k, kindList(fallbackKinds))
		default:
			d.errf(iw, "%q is not a failure kind: use some of %s%s", s.v, kindList(fallbackKinds), suggest(s.v, kindStrings(fallbackKinds)))
		}
	}
	if len(o.v) == 0 && len(items) == 0 {
		d.errf(w, "on is empty: list the failure kinds that route to the fallback, or leave it out for tool-failed, tool-timeout, circuit-open and tool-error")
	}
	return o
}

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

func (d *decoder) dependency(e entry, dep *depSpec) {
	for _, f := range d.mapping(e.val, e.w) {
		switch f.key {
		case "breaker":
			n := d.deref(f.val, f.w)
			if _, ok := n.(*ast.NullNode); ok || n == nil {
				continue
			}
			dep.breaker = opt[bool]{v: true, set: true, at: f.w.at}
			for _, b := range d.mapping(n, f.w) {
				switch b.key {
				case "failures":
					dep.failures = d.count(b.val, b.w, "")
				case "window":
					dep.window = d.count(b.val, b.w, "use 0 for failures in a row")
				case "delay":
					dep.delay = d.duration(b.val, b.w, "")
				case "probes":
					dep.probes = d.count(b.val, b.w, "use 0 or 1 for a single probe")
				default:
					d.unknown(b, breakerFields)
				}
			}
		case "concurrency":
			dep.concurrency = d.count(f.val, f.w, "use 0 for no bulkhead")
		case "max_wait":
			dep.maxWait = d.duration(f.val, f.w, "use 0 to refuse at once when the bulkhead is full")
		case "retry_budget":
			dep.retryBudget = d.number(f.val, f.w)
			if dep.retryBudget.set && (dep.retryBudget.v < 0 || dep.retryBudget.v > 1) {
				d.errf(f.w, "retry_budget %v is outside [0, 1]: it is the largest share of in-flight attempts that may be retries, such as 0.2; 0 means no budget", dep.retryBudget.v)
			}
		default:
			switch {
			case slices.Contains(toolFields, f.key):
				d.errf(f.w, "%s is set per tool, not per dependency: put it under the tools (or defaults)", f.key)
			default:
				d.unknown(f, depFields)
			}
		}
	}
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
		if mv == nil {
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

func (d *decoder) enter(w where) bool {
	d.depth++
	if d.depth > maxDepth {
		d.errf(w, "the file nests deeper than %d levels here (an alias inside the anchor it names?)", maxDepth)
		return false
	}
	return true
}

func (d *decoder) leave() { d.depth-- }

// deref follows anchors, aliases and tags to the node that holds the value.
func (d *decoder) deref(n ast.Node, w where) ast.Node {
	for range maxDepth {
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

// anchorFor returns the anchor an alias refers to: the last one of its name
// defined before it.
func (d *decoder) anchorFor(a *ast.AliasNode) *ast.AnchorNode {
	if a.Value == nil || a.Value.GetToken() == nil || a.GetToken() == nil || a.GetToken().Position == nil {
		return nil
	}
	at := a.GetToken().Position.Offset
	var found *ast.AnchorNode
	for _, an := range d.anchors[a.Value.GetToken().Value] {
		if tk := an.GetToken(); tk != nil && tk.Position != nil && tk.Position.Offset < at {
			found = an
		}
	}
	return found
}

// scalar returns the scalar behind n, or nil with no problem for a null.
func (d *decoder) scalar(n ast.Node, w where) (ast.Node, bool) {
	n = d.deref(n, w)
	switch n.(type) {
	case nil, *ast.NullNode:
		return nil, false
	}
	return n, true
}

// count decodes a whole number ≥ 0; hint says what to write instead of a
// negative one.
func (d *decoder) count(n ast.Node, w where, hint string) opt[int] {
	n, ok := d.scalar(n, w)
	if !ok {
		return opt[int]{}
	}
	in, isInt := n.(*ast.IntegerNode)
	if !isInt {
		if f, ok := n.(*ast.FloatNode); ok && f.Value == math.Trunc(f.Value) && math.Abs(f.Value) < 1<<31 {
			return d.countValue(int64(f.Value), w, hint)
		}
		d.errf(w, "must be a whole number, not %s", describeNode(n))
		return opt[int]{}
	}
	switch v := in.Value.(type) {
	case int64:
		return d.countValue(v, w, hint)
	case uint64:
		if v < 1<<31 {
			return d.countValue(int64(v), w, hint)
		}
	}
	d.errf(w, "%s is too large", in.GetToken().Value)
	return opt[int]{}
}

func (d *decoder) countValue(v int64, w where, hint string) opt[int] {
	name := w.path[strings.LastIndex(w.path, ".")+1:]
	switch {
	case v < 0:
		msg := fmt.Sprintf("%s %d is negative", name, v)
		if hint != "" {
			msg += ": " + hint
		}
		d.errf(w, "%s", msg)
		return opt[int]{}
	case v >= 1<<31:
		d.errf(w, "%s %d is too large", name, v)
		return opt[int]{}
	}
	return opt[int]{v: int(v), set: true, at: w.at}
}

// number decodes a finite number.
func (d *decoder) number(n ast.Node, w where) opt[float64] {
	n, ok := d.scalar(n, w)
	if !ok {
		return opt[float64]{}
	}
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch v := x.Value.(type) {
		case int64:
			return opt[float64]{v: float64(v), set: true, at: w.at}
		case uint64:
			return opt[float64]{v: float64(v), set: true, at: w.at}
		}
	case *ast.FloatNode:
		if !math.IsNaN(x.Value) && !math.IsInf(x.Value, 0) {
			return opt[float64]{v: x.Value, set: true, at: w.at}
		}
	case *ast.InfinityNode, *ast.NanNode:
		d.errf(w, "must be a finite number, not %s", describeNode(n))
		return opt[float64]{}
	}
	d.errf(w, "must be a number, not %s", describeNode(n))
	return opt[float64]{}
}

// duration decodes a Go duration string ("2s"), or a bare 0; hint says what
// to write instead of a negative one.
func (d *decoder) duration(n ast.Node, w where, hint string) opt[time.Duration] {
	n, ok := d.scalar(n, w)
	if !ok {
		return opt[time.Duration]{}
	}
	name := w.path[strings.LastIndex(w.path, ".")+1:]
	var text string
	switch x := n.(type) {
	case *ast.StringNode:
		text = x.Value
	case *ast.IntegerNode, *ast.FloatNode:
		tv := n.GetToken().Value
		if f, err := strconv.ParseFloat(strings.ReplaceAll(tv, "_", ""), 64); err == nil && f == 0 {
			return opt[time.Duration]{set: true, at: w.at}
		}
		d.errf(w, "%s %s has no unit: write a Go duration such as %ss or %sms", name, tv, tv, tv)
		return opt[time.Duration]{}
	default:
		d.errf(w, "must be a duration such as 2s or 500ms, not %s", describeNode(n))
		return opt[time.Duration]{}
	}
	v, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		d.errf(w, "%q is not a duration: write a number and a unit (ns, us, ms, s, m, h), such as 500ms, 2s or 1m30s", text)
		return opt[time.Duration]{}
	}
	if v < 0 {
		msg := fmt.Sprintf("%s %v is negative", name, v)
		if hint != "" {
			msg += ": " + hint
		}
		d.errf(w, "%s", msg)
		return opt[time.Duration]{}
	}
	return opt[time.Duration]{v: v, set: true, at: w.at}
}

func (d *decoder) boolean(n ast.Node, w where) opt[bool] {
	n, ok := d.scalar(n, w)
	if !ok {
		return opt[bool]{}
	}
	if b, ok := n.(*ast.BoolNode); ok {
		return opt[bool]{v: b.Value, set: true, at: w.at}
	}
	d.errf(w, "must be true or false, not %s", describeNode(n))
	return opt[bool]{}
}

func (d *decoder) text(n ast.Node, w where) opt[string] {
	n, ok := d.scalar(n, w)
	if !ok {
		return opt[string]{}
	}
	switch x := n.(type) {
	case *ast.StringNode:
		return opt[string]{v: x.Value, set: true, at: w.at}
	case *ast.LiteralNode:
		if x.Value != nil {
			return opt[string]{v: strings.TrimSpace(x.Value.Value), set: true, at: w.at}
		}
	}
	d.errf(w, "must be a name, not %s", describeNode(n))
	return opt[string]{}
}

func (d *decoder) enum(n ast.Node, w where, values ...string) opt[string] {
	s := d.text(n, w)
	if s.set && !slices.Contains(values, s.v) {
		d.errf(w, "%q is not one of %s%s", s.v, strings.Join(values, ", "), suggest(s.v, values))
		return opt[string]{}
	}
	return s
}

// toJSON converts n to the value encoding/json would decode from the same
// document, reporting what JSON cannot hold.
func (d *decoder) toJSON(n ast.Node, w where) any {
	if !d.enter(w) {
		return nil
	}
	defer d.leave()
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

// suggest returns `; did you mean "timeout"?` when word is a likely typo of
// one of known, else "".
func suggest(word string, known []string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		if dist := editDistance(strings.ToLower(word), k); dist <= maxTypo(k) && dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func maxTypo(k string) int {
	if len(k) <= 4 {
		return 1
	}
	return 2
}

// editDistance is the Damerau–Levenshtein distance (with adjacent
// transpositions) between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func kindStrings(ks []middleware.Kind) []string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return s
}

func kindList(ks []middleware.Kind) string { return strings.Join(kindStrings(ks), ", ") }
