package policyfile

import (
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// where is the place of a value, for problems: the keys that lead to it,
// and which tool, dependency and field they name.
type where struct {
	path  string // "tools.fetch_invoice.timeout"
	tool  string
	dep   string
	field string // within its tool, dependency or defaults
	at    yamlread.Pos
}

// Pos is the position of the place in the file.
func (w where) Pos() yamlread.Pos { return w.at }

// At is w at position p.
func (w where) At(p yamlread.Pos) where {
	w.at = p
	return w
}

// Name is the last key of w's path, for messages.
func (w where) Name() string { return w.path[strings.LastIndex(w.path, ".")+1:] }

// Child is the place of the field key inside w, at p: the sections of the
// file (defaults, dependencies, tools) hold tools and dependencies by name,
// and those hold fields.
func (w where) Child(key string, p yamlread.Pos) where {
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
func (w where) index(i int, p yamlread.Pos) where {
	c := w
	c.at = p
	c.path += fmt.Sprintf("[%d]", i)
	c.field += fmt.Sprintf("[%d]", i)
	return c
}

// problemAt is a problem at w.
func problemAt(w where, format string, args ...any) *Problem {
	return &Problem{Path: w.path, Tool: w.tool, Dependency: w.dep, Field: w.field,
		Line: w.at.Line, Column: w.at.Col, Message: fmt.Sprintf(format, args...)}
}
