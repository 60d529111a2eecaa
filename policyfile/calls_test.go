package policyfile_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// The loop guard's limits come from the file, field by field over the
// defaults, and bind in a scoped run.
func TestCallLimitsFromTheFile(t *testing.T) {
	f, err := policyfile.Parse([]byte("defaults:\n  calls: {identical: 2, total: 50}\ntools:\n  search: {calls: {per_tool: 3}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Describe("search"), "surface → loop guard (identical 2, per tool 3, total 50) → tool search"; got != want {
		t.Errorf("Describe = %q; want %q", got, want)
	}
	var runs atomic.Int32
	ts, err := f.WrapAll(middleware.Func("search", "", func(_ context.Context, in string) (string, error) {
		runs.Add(1)
		return "found " + in, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	search := ts.Lookup("search")
	ctx := run.With(context.Background(), "", nil)
	var kinds []middleware.Kind
	for _, in := range []string{"a", "a", "a", "b", "c"} {
		kinds = append(kinds, search.Run(ctx, in).Kind())
	}
	// identical 2 refuses the third "a"; the refusal made no call, so "b"
	// is the third call of the tool and "c", the fourth, is past per_tool.
	want := []middleware.Kind{"", "", middleware.KindCallLimit, "", middleware.KindCallLimit}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds %v; want %v: identical 2, then per tool 3", kinds, want)
		}
	}
	if runs.Load() != 3 {
		t.Errorf("%d runs; want 3", runs.Load())
	}
}

// Limits that are negative, zero or absurd are problems with their line.
func TestBadCallLimitsAreProblems(t *testing.T) {
	_, err := policyfile.Parse([]byte("tools:\n  a:\n    calls: {identical: -1, per_tool: 0, total: 20000, repeats: maybe, every: 2}\n"))
	if err == nil {
		t.Fatal("Parse accepted the limits")
	}
	for _, want := range []string{
		"tools.a.calls.identical: identical -1 is negative: use a positive number, or leave the field out for no limit",
		"tools.a.calls.per_tool: per_tool 0 would refuse every call",
		"tools.a.calls.total: total 20000 is more than 10000, the most a policies file allows",
		`tools.a.calls.repeats: "maybe" is not one of refuse, allow`,
		`tools.a.calls.every: unknown field "every"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, err)
		}
	}
}
