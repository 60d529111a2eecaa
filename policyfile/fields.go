package policyfile

import (
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// The fields of the file's types: each value is an opt, set or left out,
// with where it was set, decoded by the Reader of package yamlread.

// opt is a field that may be left out, with where it was set.
type opt[T any] struct {
	v   T
	set bool
	at  yamlread.Pos
}

func (o opt[T]) or(def opt[T]) opt[T] {
	if o.set {
		return o
	}
	return def
}

// optAt is the field decoded at w: v if ok, else left out.
func optAt[T any](w where, v T, ok bool) opt[T] {
	if !ok {
		return opt[T]{}
	}
	return opt[T]{v: v, set: true, at: w.at}
}

// count decodes a whole number ≥ 0; hint says what to write instead of a
// negative one.
func (d *decoder) count(n ast.Node, w where, hint string) opt[int] {
	v, ok := d.Count(n, w, hint)
	return optAt(w, v, ok)
}

// uintTo decodes a count into *dst, leaving it alone when the value is
// null or a problem; it reports whether it set *dst.
func (d *decoder) uintTo(dst *uint, e entry, hint string) bool {
	c := d.count(e.Value, e.Where, hint)
	if c.set {
		*dst = uint(c.v)
	}
	return c.set
}

// number decodes a finite number.
func (d *decoder) number(n ast.Node, w where) opt[float64] {
	v, ok := d.Number(n, w)
	return optAt(w, v, ok)
}

// duration decodes a Go duration string ("2s"), or a bare 0; hint says what
// to write instead of a negative one.
func (d *decoder) duration(n ast.Node, w where, hint string) opt[time.Duration] {
	v, ok := d.Duration(n, w, hint)
	return optAt(w, v, ok)
}

func (d *decoder) boolean(n ast.Node, w where) opt[bool] {
	v, ok := d.Bool(n, w)
	return optAt(w, v, ok)
}

func (d *decoder) text(n ast.Node, w where) opt[string] {
	v, ok := d.Text(n, w)
	return optAt(w, v, ok)
}

// enum decodes one of values, with the value meant when the text is close
// to one.
func (d *decoder) enum(n ast.Node, w where, values ...string) opt[string] {
	s := d.text(n, w)
	if s.set && !slices.Contains(values, s.v) {
		d.errf(w, "%q is not one of %s%s", s.v, strings.Join(values, ", "), suggest(s.v, values))
		return opt[string]{}
	}
	return s
}
