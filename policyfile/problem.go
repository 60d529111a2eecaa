package policyfile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is every problem found in a policies file, or in binding it to
// tools in File.WrapAll or File.CheckTools: they check everything before
// they return and list all problems at once, not just the first. errors.As
// finds an *Error in their errors, and each *Problem in it.
type Error struct {
	// File is the path given to Load or the name given to LoadFS; "" for
	// Parse.
	File string
	// Problems are the problems, ordered by line, then column.
	Problems []*Problem
}

// Problem is one problem in a policies file: where it is and what to do.
type Problem struct {
	// Path is the field at fault as the keys that lead to it, such as
	// "tools.fetch_invoice.timeout" or "dependencies.billing.breaker.delay";
	// "" for the file as a whole.
	Path string
	// Tool is the tool the problem is about, "" if none.
	Tool string
	// Dependency is the dependency the problem is about, "" if none.
	Dependency string
	// Field is the field at fault within its tool, dependency or the
	// defaults, such as "timeout" or "backoff.jitter"; "" when the problem is
	// about a whole entry (a tool not passed to WrapAll, a fallback cycle is
	// about the tool's "fallback.tool").
	Field string
	// Line and Column locate the problem in the file, 1-based; 0 when it
	// has no place there (a tool passed to WrapAll twice, a file larger
	// than MaxSize).
	Line, Column int
	// Message says what is wrong and what to do about it.
	Message string
}

// Error returns the problem with its place: `line 7, column 5:
// tools.fetch_invoice.timout: unknown field; did you mean "timeout"?`.
func (p *Problem) Error() string {
	return p.Format("")
}

// Format is the problem's line as compilers write one, prefixed with file
// ("policies.yaml:7:5: tools.fetch_invoice.timout: ..."); "" for file gives
// Error's form.
func (p *Problem) Format(file string) string {
	var b strings.Builder
	switch {
	case file != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", file, p.Line, p.Column)
	case file != "":
		fmt.Fprintf(&b, "%s: ", file)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", p.Line, p.Column)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error lists every problem, one a line, each with its file, line and
// column where known, after a line that counts them.
func (e *Error) Error() string {
	var b strings.Builder
	where := "the policies file"
	if e.File != "" {
		where = e.File
	}
	n := len(e.Problems)
	if n == 1 {
		fmt.Fprintf(&b, "toolsafe: %s has 1 problem:", where)
	} else {
		fmt.Fprintf(&b, "toolsafe: %s has %d problems:", where, n)
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Format(e.File))
	}
	return b.String()
}

// Unwrap returns the problems, so errors.As finds each *Problem.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// problems collects the problems of one pass over a file.
type problems struct {
	list      []*Problem
	suggested int // the problems that looked for a name meant (suggestName)
}

func (ps *problems) add(p *Problem) { ps.list = append(ps.list, p) }

// err returns an *Error with the problems in file order, or nil.
func (ps *problems) err(file string) error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	slices.SortStableFunc(list, func(a, b *Problem) int {
		// Problems with no line (about the binding of tools) come last.
		la, lb := a.Line, b.Line
		if la == 0 {
			la = int(^uint(0) >> 1)
		}
		if lb == 0 {
			lb = int(^uint(0) >> 1)
		}
		return cmp.Or(cmp.Compare(la, lb), cmp.Compare(a.Column, b.Column))
	})
	return &Error{File: file, Problems: list}
}
