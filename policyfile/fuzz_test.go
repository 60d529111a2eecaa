package policyfile_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
)

// FuzzParse holds Parse to its contract on any input: it never
// panics, and returns either a Config or a *Error with at least one
// problem, never both and never neither. What it returns is then usable:
// describing and wrapping do not panic either. The seed corpus is in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(issueExample))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := policyfile.Parse(data)
		switch {
		case cfg == nil && err == nil:
			t.Fatal("Parse returned neither a Config nor an error")
		case cfg != nil && err != nil:
			t.Fatalf("Parse returned both a Config and an error: %v", err)
		case err != nil:
			var ce *policyfile.Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("the error is not a *Error with problems: %#v", err)
			}
			for _, p := range ce.Problems {
				if p.Message == "" || p.Line < 0 || p.Column < 0 {
					t.Fatalf("problem without a message or with a bad place: %+v", p)
				}
			}
			_ = err.Error()
			return
		}
		var ts []tools.Tool
		for _, name := range cfg.Tools() {
			_ = cfg.Describe(name)
			ts = append(ts, middleware.Func(name, "fuzz", func(_ context.Context, in string) (string, error) { return in, nil }))
		}
		for _, name := range cfg.Dependencies() {
			_ = cfg.DescribeDependency(name)
		}
		_ = cfg.Describe("not in the file")
		wrapped, err := cfg.WrapAll(ts...)
		if err != nil {
			_ = err.Error()
			return
		}
		for _, w := range wrapped {
			if w.Name() == "" {
				continue
			}
			// Every stack answers without panicking; no tool here waits.
			_, _ = w.Call(context.Background(), `{"query":"x"}`)
		}
	})
}
