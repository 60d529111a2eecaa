package policyfile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// FuzzParse holds Parse to its contract on any input: it never panics, and
// returns either a File or an *Error with at least one problem, never both
// and never neither; a file refused by a limit gets that one problem. What
// it returns is then usable: describing, checking and wrapping do not
// panic either. The seed corpus is in testdata/fuzz/FuzzParse; the inputs
// of a MiB are generated in limits_test.go.
func FuzzParse(f *testing.F) {
	f.Add([]byte(issueExample))
	f.Add([]byte(realistic(20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := policyfile.Parse(data)
		switch {
		case file == nil && err == nil:
			t.Fatal("Parse returned neither a File nor an error")
		case file != nil && err != nil:
			t.Fatalf("Parse returned both a File and an error: %v", err)
		case err != nil:
			var pe *policyfile.Error
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("the error is not a *policyfile.Error with problems: %#v", err)
			}
			for _, p := range pe.Problems {
				if p.Message == "" || p.Line < 0 || p.Column < 0 {
					t.Fatalf("problem without a message or with a bad place: %+v", p)
				}
				if isLimit(p) && len(pe.Problems) != 1 {
					t.Fatalf("a file past a limit got more than its one problem: %v", err)
				}
			}
			_ = err.Error()
			return
		}
		var ts []tools.Tool
		for _, name := range file.Tools() {
			_ = file.Describe(name)
			ts = append(ts, middleware.Func(name, "fuzz", func(_ context.Context, in string) (string, error) { return in, nil }))
		}
		for _, name := range file.Dependencies() {
			_ = file.DescribeDependency(name)
		}
		_ = file.Describe("not in the file")
		_ = file.CheckTools(file.Tools()...)
		wrapped, err := file.WithApprover(approval.NewGrants()).WrapAll(ts...)
		if err != nil {
			_ = err.Error()
			return
		}
		for _, w := range wrapped {
			if w.Name() == "" {
				continue
			}
			// Every stack answers without panicking; no tool here waits,
			// and a gated one pauses.
			_, _ = w.Call(context.Background(), `{"query":"x"}`)
		}
	})
}

// isLimit reports whether p is the problem of a file past a limit, which
// is refused before it is parsed.
func isLimit(p *policyfile.Problem) bool {
	for _, s := range []string{"the most a policies file may", "the most a policies file allows in one mapping",
		"hold too many keys by here", "too many empty values", "document markers (---)"} {
		if strings.Contains(p.Message, s) {
			return true
		}
	}
	return false
}
