package yamlread

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The values of single fields: counts, numbers, durations, booleans and
// names, each with the problem of a value of the wrong kind. Each returns
// false for a null, with no problem, and for a problem it reported at at.

// Scalar returns the scalar behind n, or false with no problem for a null.
func (r *Reader[P]) Scalar(n ast.Node, at P) (ast.Node, bool) {
	n = r.Deref(n, at)
	switch n.(type) {
	case nil, *ast.NullNode:
		return nil, false
	}
	return n, true
}

// Count decodes a whole number in [0, 2³¹); hint says what to write
// instead of a negative one.
func (r *Reader[P]) Count(n ast.Node, at P, hint string) (int, bool) {
	n, ok := r.Scalar(n, at)
	if !ok {
		return 0, false
	}
	in, isInt := n.(*ast.IntegerNode)
	if !isInt {
		if f, ok := n.(*ast.FloatNode); ok && f.Value == math.Trunc(f.Value) && math.Abs(f.Value) < 1<<31 {
			return r.count(int64(f.Value), at, hint)
		}
		r.errf(at, "must be a whole number, not %s", Describe(n))
		return 0, false
	}
	switch v := in.Value.(type) {
	case int64:
		return r.count(v, at, hint)
	case uint64:
		if v < 1<<31 {
			return r.count(int64(v), at, hint)
		}
	}
	r.errf(at, "%s is too large", in.GetToken().Value)
	return 0, false
}

func (r *Reader[P]) count(v int64, at P, hint string) (int, bool) {
	switch {
	case v < 0:
		msg := fmt.Sprintf("%s %d is negative", at.Name(), v)
		if hint != "" {
			msg += ": " + hint
		}
		r.report(at, msg)
		return 0, false
	case v >= 1<<31:
		r.errf(at, "%s %d is too large", at.Name(), v)
		return 0, false
	}
	return int(v), true
}

// Number decodes a finite number.
func (r *Reader[P]) Number(n ast.Node, at P) (float64, bool) {
	n, ok := r.Scalar(n, at)
	if !ok {
		return 0, false
	}
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch v := x.Value.(type) {
		case int64:
			return float64(v), true
		case uint64:
			return float64(v), true
		}
	case *ast.FloatNode:
		if !math.IsNaN(x.Value) && !math.IsInf(x.Value, 0) {
			return x.Value, true
		}
	case *ast.InfinityNode, *ast.NanNode:
		r.errf(at, "must be a finite number, not %s", Describe(n))
		return 0, false
	}
	r.errf(at, "must be a number, not %s", Describe(n))
	return 0, false
}

// Duration decodes a Go duration string ("2s") of at least 0, or a bare
// 0; hint says what to write instead of a negative one.
func (r *Reader[P]) Duration(n ast.Node, at P, hint string) (time.Duration, bool) {
	n, ok := r.Scalar(n, at)
	if !ok {
		return 0, false
	}
	var text string
	switch x := n.(type) {
	case *ast.StringNode:
		text = x.Value
	case *ast.IntegerNode, *ast.FloatNode:
		tv := n.GetToken().Value
		if f, err := strconv.ParseFloat(strings.ReplaceAll(tv, "_", ""), 64); err == nil && f == 0 {
			return 0, true
		}
		r.errf(at, "%s %s has no unit: write a Go duration such as %ss or %sms", at.Name(), tv, tv, tv)
		return 0, false
	default:
		r.errf(at, "must be a duration such as 2s or 500ms, not %s", Describe(n))
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		r.errf(at, "%q is not a duration: write a number and a unit (ns, us, ms, s, m, h), such as 500ms, 2s or 1m30s", text)
		return 0, false
	}
	if v < 0 {
		msg := fmt.Sprintf("%s %v is negative", at.Name(), v)
		if hint != "" {
			msg += ": " + hint
		}
		r.report(at, msg)
		return 0, false
	}
	return v, true
}

// Bool decodes true or false.
func (r *Reader[P]) Bool(n ast.Node, at P) (bool, bool) {
	n, ok := r.Scalar(n, at)
	if !ok {
		return false, false
	}
	if b, ok := n.(*ast.BoolNode); ok {
		return b.Value, true
	}
	r.errf(at, "must be true or false, not %s", Describe(n))
	return false, false
}

// Text decodes a name: a string, or a block of text trimmed of spaces.
func (r *Reader[P]) Text(n ast.Node, at P) (string, bool) {
	n, ok := r.Scalar(n, at)
	if !ok {
		return "", false
	}
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		if x.Value != nil {
			return strings.TrimSpace(x.Value.Value), true
		}
	}
	r.errf(at, "must be a name, not %s", Describe(n))
	return "", false
}
