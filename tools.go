package toolsafe

import (
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/internal/typednil"

	"github.com/tmc/langchaingo/tools"
)

// Tools is the tool list of one agent, such as the policies file's WrapAll
// returns. It is a []tools.Tool, so it goes straight to langchaingo:
//
//	agent := agents.NewOneShotAgent(llm, wrapped)
//
// langchaingo's executor finds the tool the model names by
// strings.ToUpper of its name, and of two tools with one upper-cased name
// the later silently answers for both. Check refuses such a list; Lookup
// finds a tool as the executor would.
type Tools []tools.Tool

// Lookup returns the *Tool that langchaingo's executor would call for a
// model's action naming name: names are compared upper-cased, so "refund"
// finds "Refund", and of two matches the later one wins, as in the
// executor. It returns nil when no tool matches, or when the one that
// would be called is not a *Tool (a tool that is not wrapped).
func (ts Tools) Lookup(name string) *Tool {
	want := strings.ToUpper(name)
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if typednil.Is(t) || strings.ToUpper(t.Name()) != want {
			continue
		}
		w, _ := t.(*Tool)
		return w
	}
	return nil
}

// Check reports whether ts can be given to one agent. It returns a
// *ToolListError naming every nil tool and every tool whose name collides
// with an earlier one's (see NamesCollide), or nil. It calls Name on each
// tool that is not nil, and nothing else.
func (ts Tools) Check() error {
	var e ToolListError
	names := make([]string, 0, len(ts))
	index := make([]int, 0, len(ts)) // the position in ts of names[i]
	for i, t := range ts {
		if typednil.Is(t) {
			e.Nil = append(e.Nil, i)
			continue
		}
		names = append(names, t.Name())
		index = append(index, i)
	}
	for _, c := range collisions(names) {
		c.First, c.Second = index[c.First], index[c.Second]
		e.Collisions = append(e.Collisions, c)
	}
	if len(e.Nil) == 0 && len(e.Collisions) == 0 {
		return nil
	}
	e.Len = len(ts)
	return &e
}

// CheckNames is Check for a tool list held as names, for code that lists
// or dispatches tools in another form (an MCP server's tool list, a
// function-calling dispatcher's table): it returns a *ToolListError naming
// every name that collides with an earlier one (see NamesCollide), or nil.
func CheckNames(names ...string) error {
	cs := collisions(names)
	if len(cs) == 0 {
		return nil
	}
	return &ToolListError{Len: len(names), Collisions: cs}
}

// NamesCollide reports whether a and b name one tool for a dispatcher that
// ignores case: they are equal under Unicode case folding
// (strings.EqualFold: "Refund" and "REFUND", "K" and the Kelvin sign "K"),
// or once upper-cased as langchaingo's executor does (strings.ToUpper,
// which also maps the dotless "ı" of "fetch_ınvoice" to "I").
func NamesCollide(a, b string) bool {
	//lint:ignore SA6005 upper-casing is the executor's rule, and it differs from EqualFold ("ı" and "i")
	return strings.EqualFold(a, b) || strings.ToUpper(a) == strings.ToUpper(b)
}

// ToolListError is what Tools.Check and CheckNames return: the entries of a
// tool list that one agent cannot be given. Positions are 0-based.
type ToolListError struct {
	// Len is the number of entries of the list checked.
	Len int
	// Nil are the positions of the nil tools, in order; always empty from
	// CheckNames.
	Nil []int
	// Collisions are the entries whose name collides with an earlier
	// entry's, each against the earliest such entry, in the order of the
	// later entry.
	Collisions []NameCollision
}

// NameCollision is two entries of a tool list whose names collide (see
// NamesCollide): an executor that ignores case would call only one of
// them, whichever the model meant.
type NameCollision struct {
	// First and Second are the positions of the two entries, First < Second.
	First, Second int
	// FirstName and SecondName are their names.
	FirstName, SecondName string
}

// Error lists every problem: "toolsafe: tool 3 of 4 is nil; tools 1
// "Refund" and 2 "refund" collide: ...". Positions in the text are
// 1-based.
func (e *ToolListError) Error() string {
	var parts []string
	for _, i := range e.Nil {
		parts = append(parts, fmt.Sprintf("tool %d of %d is nil", i+1, e.Len))
	}
	for _, c := range e.Collisions {
		parts = append(parts, c.String())
	}
	return "toolsafe: " + strings.Join(parts, "; ")
}

// String says which two entries collide and why that matters.
func (c NameCollision) String() string {
	what := "have the same name"
	if c.FirstName != c.SecondName {
		what = "have names that differ only in case"
	}
	return fmt.Sprintf("tools %d %q and %d %q %s: langchaingo's executor looks tools up by their upper-cased name, so the later one would answer calls meant for either; rename one",
		c.First+1, c.FirstName, c.Second+1, c.SecondName, what)
}

// collisions returns, for each name that collides with an earlier one,
// the collision with the earliest such name. It takes time linear in the
// total length of the names.
func collisions(names []string) []NameCollision {
	var out []NameCollision
	byUpper := make(map[string]int, len(names))
	byFold := make(map[string]int, len(names))
	for i, n := range names {
		up, fold := strings.ToUpper(n), canonical.FoldCase(n)
		j, ok := byUpper[up]
		if k, found := byFold[fold]; found && (!ok || k < j) {
			j, ok = k, true
		}
		if ok {
			out = append(out, NameCollision{First: j, Second: i, FirstName: names[j], SecondName: n})
		}
		if _, seen := byUpper[up]; !seen {
			byUpper[up] = i
		}
		if _, seen := byFold[fold]; !seen {
			byFold[fold] = i
		}
	}
	return out
}
