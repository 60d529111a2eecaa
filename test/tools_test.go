package test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
)

func echoTool(name string) tools.Tool {
	return middleware.Func(name, "echoes", func(_ context.Context, in string) (string, error) { return name + ": " + in, nil })
}

func TestToolsCheckRefusesNilToolsAndNamesThatCollide(t *testing.T) {
	var typedNil *toolsafe.Tool
	tests := []struct {
		name  string
		list  toolsafe.Tools
		nils  []int
		pairs [][2]int // the colliding positions
		says  []string
	}{
		{name: "distinct names pass", list: toolsafe.Tools{echoTool("refund"), echoTool("search")}},
		{name: "an empty list passes", list: nil},
		{
			name: "a nil tool and a typed nil are named by position",
			list: toolsafe.Tools{echoTool("a"), nil, typedNil},
			nils: []int{1, 2},
			says: []string{"tool 2 of 3 is nil", "tool 3 of 3 is nil"},
		},
		{
			name:  "two tools with one name",
			list:  toolsafe.Tools{echoTool("search"), echoTool("search")},
			pairs: [][2]int{{0, 1}},
			says:  []string{`tools 1 "search" and 2 "search" have the same name`},
		},
		{
			name:  "names that differ only in case",
			list:  toolsafe.Tools{echoTool("Refund"), echoTool("search"), echoTool("refund")},
			pairs: [][2]int{{0, 2}},
			says:  []string{`tools 1 "Refund" and 3 "refund" have names that differ only in case: langchaingo's executor looks tools up by their upper-cased name, so the later one would answer calls meant for either; rename one`},
		},
		{
			name:  "a dotless i upper-cases as langchaingo does, though EqualFold tells it apart",
			list:  toolsafe.Tools{echoTool("fetch_invoice"), echoTool("fetch_ınvoice")},
			pairs: [][2]int{{0, 1}},
		},
		{
			name:  "the Kelvin sign folds to k, though upper-casing keeps it",
			list:  toolsafe.Tools{echoTool("kill"), echoTool("\u212Aill")},
			pairs: [][2]int{{0, 1}},
		},
		{
			name:  "each later tool is reported once, against the earliest",
			list:  toolsafe.Tools{echoTool("a"), echoTool("A"), echoTool("a")},
			pairs: [][2]int{{0, 1}, {0, 2}},
		},
		{
			name:  "positions count the nil tools too",
			list:  toolsafe.Tools{nil, echoTool("x"), echoTool("X")},
			nils:  []int{0},
			pairs: [][2]int{{1, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.list.Check()
			if len(tt.nils) == 0 && len(tt.pairs) == 0 {
				if err != nil {
					t.Fatalf("Check = %v; want nil", err)
				}
				return
			}
			var le *toolsafe.ToolListError
			if !errors.As(err, &le) {
				t.Fatalf("Check = %v; want a *ToolListError", err)
			}
			if le.Len != len(tt.list) || !equalInts(le.Nil, tt.nils) {
				t.Errorf("Len %d, Nil %v; want %d, %v", le.Len, le.Nil, len(tt.list), tt.nils)
			}
			var pairs [][2]int
			for _, c := range le.Collisions {
				pairs = append(pairs, [2]int{c.First, c.Second})
				if c.FirstName != tt.list[c.First].Name() || c.SecondName != tt.list[c.Second].Name() {
					t.Errorf("collision %+v names other tools than its positions", c)
				}
			}
			if len(pairs) != len(tt.pairs) {
				t.Fatalf("collisions %v; want %v", pairs, tt.pairs)
			}
			for i := range pairs {
				if pairs[i] != tt.pairs[i] {
					t.Errorf("collisions %v; want %v", pairs, tt.pairs)
				}
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error lacks %q:\n%v", s, err)
				}
			}
		})
	}
}

func TestCheckNamesIsCheckForNames(t *testing.T) {
	if err := toolsafe.CheckNames("lookup", "search"); err != nil {
		t.Errorf("CheckNames of distinct names = %v", err)
	}
	err := toolsafe.CheckNames("lookup", "Search", "SEARCH")
	var le *toolsafe.ToolListError
	if !errors.As(err, &le) || len(le.Collisions) != 1 || le.Collisions[0] != (toolsafe.NameCollision{First: 1, Second: 2, FirstName: "Search", SecondName: "SEARCH"}) || len(le.Nil) != 0 {
		t.Errorf("CheckNames = %#v", err)
	}
}

// The list check agrees with NamesCollide on every pair, whatever the
// runes: the check's maps and the pairwise rule are one rule.
func FuzzNamesCollideAgreesWithCheckNames(f *testing.F) {
	for _, p := range [][2]string{{"Refund", "refund"}, {"ı", "i"}, {"ß", "ẞ"}, {"\u212A", "k"}, {"ſ", "S"}, {"a", "b"}, {"\xff", "\xfe"}, {"ǅ", "ǆ"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		want := toolsafe.NamesCollide(a, b)
		if got := toolsafe.CheckNames(a, b) != nil; got != want {
			t.Errorf("CheckNames(%q, %q) refused: %v; NamesCollide: %v", a, b, got, want)
		}
		if toolsafe.NamesCollide(b, a) != want {
			t.Errorf("NamesCollide(%q, %q) is not symmetric", a, b)
		}
	})
}

func TestLookupFindsTheToolTheExecutorWouldCall(t *testing.T) {
	refund := toolsafe.Wrap(echoTool("Refund"))
	search := toolsafe.Wrap(echoTool("search"))
	list := toolsafe.Tools{refund, search, echoTool("plain")}
	tests := []struct {
		name string
		want *toolsafe.Tool
	}{
		{"Refund", refund},
		{"refund", refund},
		{"REFUND", refund},
		{"Search", search},
		{"plain", nil},   // not a *toolsafe.Tool
		{"missing", nil}, // no such tool
	}
	for _, tt := range tests {
		t.Run("Lookup("+tt.name+")", func(t *testing.T) {
			if got := list.Lookup(tt.name); got != tt.want {
				t.Errorf("Lookup(%q) = %v; want %v", tt.name, got, tt.want)
			}
		})
	}
	t.Run("of two tools that collide the later one wins, as in the executor", func(t *testing.T) {
		later := toolsafe.Wrap(echoTool("refund"))
		if got := append(list, later).Lookup("Refund"); got != later {
			t.Errorf("Lookup = %v; want the later refund", got)
		}
	})
}

// The reason for Check, through a real langchaingo executor: with a gated
// Refund and an ungated refund in one list, the model's call to Refund runs
// the ungated one, and no approval is asked. Check refuses that list; with
// the gated tool alone, the same call pauses for approval.
func TestACaseCollisionLetsTheModelBypassTheGate(t *testing.T) {
	applied := 0
	call := func(name string) tools.Tool {
		return middleware.Func(name, "refunds an order", func(context.Context, string) (string, error) {
			applied++
			return "refunded", nil
		})
	}
	gated := toolsafe.Wrap(call("Refund"), toolsafe.WithApproval(approval.NewGrants()))
	ungated := toolsafe.Wrap(call("refund"))
	script := []string{
		"Thought: Refund the order.\nAction: Refund\nAction Input: {\"order\":\"A-1\"}",
		"Thought: Done.\nFinal Answer: refunded",
	}
	run := func(list toolsafe.Tools) error {
		agent := agents.NewOneShotAgent(fake.NewFakeLLM(script), list)
		_, err := agents.NewExecutor(agent, agents.WithMaxIterations(3)).Call(context.Background(), map[string]any{"input": "refund A-1"})
		return err
	}

	unsafe := toolsafe.Tools{gated, ungated}
	if err := run(unsafe); err != nil || applied != 1 {
		t.Fatalf("run = %v with %d refunds applied; the executor no longer lets the later tool win, so this test no longer shows the hazard", err, applied)
	}
	if unsafe.Lookup("Refund") != ungated {
		t.Error("Lookup does not name the tool the executor called")
	}
	var le *toolsafe.ToolListError
	if err := unsafe.Check(); !errors.As(err, &le) || len(le.Collisions) != 1 {
		t.Fatalf("Check = %v; want the collision refused", err)
	}

	applied = 0
	var ar *approval.Required
	if err := run(toolsafe.Tools{gated}); !errors.As(err, &ar) || applied != 0 {
		t.Errorf("with the gated tool alone: %v, %d applied; want an approval pause and none", err, applied)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
