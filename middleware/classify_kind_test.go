package middleware_test

import (
	"fmt"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

// namedKind is a tool author's error type that names its kind from what the
// upstream answered.
type namedKind struct{ kind string }

func (e namedKind) Error() string         { return "upstream said " + e.kind }
func (e namedKind) Kind() middleware.Kind { return middleware.Kind(e.kind) }

// asNamedKind reaches namedKind through an As method (the other walk).
type asNamedKind struct{ namedKind }

func (e asNamedKind) As(target any) bool { return false }

// A Kind is a label of every metric and span: an error that names a kind
// outside the taxonomy, or a *Failure of such a kind, is classified as the
// foreign error it is, never with the upstream's words as its kind; one that
// names a Kind of the taxonomy keeps it.
func TestClassifyKeepsKindsInTheTaxonomy(t *testing.T) {
	upstream := "account 4242 is locked"
	for name, err := range map[string]error{
		"Kind method":                fmt.Errorf("call: %w", namedKind{upstream}),
		"Kind method, As walk":       fmt.Errorf("call: %w", asNamedKind{namedKind{upstream}}),
		"*Failure":                   fmt.Errorf("call: %w", &middleware.Failure{Kind: middleware.Kind(upstream)}),
		"*Failure of no Kind at all": &middleware.Failure{},
	} {
		if kind, retryable := middleware.Classify(err); kind != middleware.KindFailed || !retryable {
			t.Errorf("%s: Classify = %q, %v; want tool-failed, retryable (a foreign error)", name, kind, retryable)
		}
	}
	if kind, _ := middleware.Classify(namedKind{string(middleware.KindBusy)}); kind != middleware.KindBusy {
		t.Errorf("a Kind method naming tool-busy: Classify = %q; want tool-busy", kind)
	}
	if kind, _ := middleware.Classify(&middleware.Failure{Kind: middleware.KindBudget}); kind != middleware.KindBudget {
		t.Errorf("a *Failure of budget-exceeded: Classify = %q; want budget-exceeded", kind)
	}
}
