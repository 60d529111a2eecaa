package policyfile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The values of single fields: counts, numbers, durations, booleans, names
// and enumerations, each with the problem of a value of the wrong kind.

// scalar returns the scalar behind n, or false with no problem for a null.
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

// uintTo decodes a count into *dst, leaving it alone when the value is
// null or a problem; it reports whether it set *dst.
func (d *decoder) uintTo(dst *uint, e entry, hint string) bool {
	c := d.count(e.val, e.w, hint)
	if c.set {
		*dst = uint(c.v)
	}
	return c.set
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
