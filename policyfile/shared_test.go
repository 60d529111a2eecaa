package policyfile_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile"
)

// store is a policyfile.Shared of the test's own: its breaker is a plain
// policy.CircuitBreaker, its budget refuses every retry; it counts what it
// was asked for.
type store struct {
	breakers, budgets atomic.Int32
	admitted          atomic.Int32
	made              *policy.CircuitBreaker
	err               error
}

func (s *store) CircuitBreaker(dependency string, b policy.Breaker) (*policy.CircuitBreaker, error) {
	s.breakers.Add(1)
	if s.err != nil {
		return nil, s.err
	}
	s.made = policy.NewCircuitBreaker(dependency, b)
	return s.made, nil
}

func (s *store) RetryBudget(string, float64) (policy.SharedBudget, error) {
	s.budgets.Add(1)
	return s, s.err
}

func (s *store) Admit(_ context.Context, retry bool) bool {
	s.admitted.Add(1)
	return !retry
}

const sharedFile = `
dependencies:
  billing: {breaker: {failures: 1, delay: 1m}, retry_budget: 0.2, concurrency: 4, shared: redis}
  search:  {breaker: {}}
tools:
  fetch_invoice: {dependency: billing, retries: 2, backoff: {base: 0, multiplier: 1}}
  list_invoices: {dependency: billing}
  find:          {dependency: search}
`

func TestSharedDependenciesUseTheStoreFromCode(t *testing.T) {
	file := mustParse(t, sharedFile)
	var calls atomic.Int32
	failing := func(name string) *fakeTool {
		return &fakeTool{name: name, call: func() error {
			calls.Add(1)
			return middleware.Transient(errors.New("billing API busy"))
		}}
	}
	s := &store{}
	ts, err := file.WithShared("redis", s).WrapAll(failing("fetch_invoice"), failing("list_invoices"), failing("find"))
	if err != nil {
		t.Fatal(err)
	}
	if s.breakers.Load() != 1 || s.budgets.Load() != 1 {
		t.Fatalf("the store made %d breakers and %d budgets for one shared dependency; want 1 and 1", s.breakers.Load(), s.budgets.Load())
	}
	// The store's budget refuses the retry: budget-exceeded after one
	// attempt, told of it (one Admit for the attempt, one for the retry).
	r := ts.Lookup("fetch_invoice").Run(context.Background(), `{}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindBudget || calls.Load() != 1 || s.admitted.Load() != 2 {
		t.Fatalf("a call with the store's budget: %+v after %d calls and %d admissions", r, calls.Load(), s.admitted.Load())
	}
	// The failure opened the store's breaker, which both billing tools share.
	if !s.made.IsOpen() {
		t.Fatalf("the store's breaker is %v after a failure with failures: 1", s.made.State())
	}
	if r := ts.Lookup("list_invoices").Run(context.Background(), `{}`); r.Failure == nil || r.Failure.Kind != middleware.KindCircuitOpen {
		t.Fatalf("the other billing tool: %+v, want circuit-open from the shared breaker", r)
	}
	if r := ts.Lookup("find").Run(context.Background(), `{}`); r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
		t.Fatalf("a tool of a dependency not shared: %+v", r)
	}

	want := "surface → retry 2 (no wait; budget billing 20% (shared: redis)) → breaker billing (shared: redis) → bulkhead billing(4) → tool fetch_invoice"
	if got := file.Describe("fetch_invoice"); got != want {
		t.Errorf("Describe:\n%s\nwant\n%s", got, want)
	}
	if got := file.DescribeDependency("billing"); !strings.Contains(got, "of the fleet's attempts") || !strings.Contains(got, "shared through redis by every replica") {
		t.Errorf("DescribeDependency: %s", got)
	}
}

func TestSharedProblems(t *testing.T) {
	tool := func(name string) *fakeTool { return &fakeTool{name: name, call: func() error { return nil }} }
	for _, c := range []struct {
		name, yaml string
		with       func(*policyfile.File) *policyfile.File
		want       []string // parts of the problems, in order
	}{
		{name: "a dependency shared with no store from code",
			yaml: sharedFile,
			want: []string{`line 3, column 83: dependencies.billing.shared: shared: redis needs a store from code: call WithShared("redis", store)`}},
		{name: "a store for a kind the file does not know",
			yaml: sharedFile,
			with: func(f *policyfile.File) *policyfile.File {
				return f.WithShared("redis", &store{}).WithShared("etcd", &store{})
			},
			want: []string{`WithShared("etcd"): a dependency can be shared through redis only`}},
		{name: "a store that cannot make the state",
			yaml: sharedFile,
			with: func(f *policyfile.File) *policyfile.File { return f.WithShared("redis", &store{err: errors.New("no")}) },
			want: []string{`tools.fetch_invoice: dependency billing: its shared breaker: no`, `tools.list_invoices: dependency billing: its shared breaker: no`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := mustParse(t, c.yaml)
			if c.with != nil {
				file = c.with(file)
			}
			_, err := file.WrapAll(tool("fetch_invoice"), tool("list_invoices"), tool("find"))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the problems\n%v\ndo not hold %q", err, w)
				}
			}
		})
	}
}

func TestSharedIsChecked(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"a kind the format does not know", `dependencies: {billing: {breaker: {}, shared: rediss}}`,
			`dependencies.billing.shared: "rediss" is not one of none, redis; did you mean "redis"?`},
		{"nothing to share", `dependencies: {billing: {concurrency: 4, shared: redis}}`,
			"dependencies.billing.shared: shared: redis shares the breaker and the retry budget of the dependency, and it has neither"},
		{"not a name", `dependencies: {billing: {breaker: {}, shared: [redis]}}`,
			"dependencies.billing.shared: must be a name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := policyfile.Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant a problem holding %q", err, c.want)
			}
		})
	}
	for _, ok := range []string{
		`dependencies: {billing: {breaker: {}, shared: redis}}`,
		`dependencies: {billing: {retry_budget: 0.2, shared: redis}}`,
		`dependencies: {billing: {concurrency: 2, shared: none}}`,
	} {
		if _, err := policyfile.Parse([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// fakeTool is a tool whose call returns what call says.
type fakeTool struct {
	name string
	call func() error
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) Description() string { return "a test tool" }
func (f *fakeTool) Call(context.Context, string) (string, error) {
	if err := f.call(); err != nil {
		return "", err
	}
	return "ok", nil
}
