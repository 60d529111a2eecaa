package middleware_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestEveryKindHasASentinelThatFindsItsFailures(t *testing.T) {
	kinds := middleware.Kinds()
	if len(kinds) != 12 {
		t.Fatalf("Kinds() = %v; want the 12 kinds of the taxonomy", kinds)
	}
	for _, k := range kinds {
		err := fmt.Errorf("wrapped: %w", &middleware.Failure{Kind: k, Tool: "t"})
		if k.Err() == nil || !errors.Is(err, k.Err()) {
			t.Errorf("errors.Is(a %s failure, %s.Err()) is false", k, k)
		}
		for _, other := range kinds {
			if other != k && errors.Is(err, other.Err()) {
				t.Errorf("a %s failure is also %s", k, other)
			}
		}
	}
	if middleware.Kind("no-such-kind").Err() != nil {
		t.Error("a string that is no Kind has a sentinel")
	}
}

func TestSideEffectSaysWhetherTheActionMayHaveLanded(t *testing.T) {
	if got := middleware.SideEffectUnknown.String(); got != "unknown" {
		t.Errorf("SideEffectUnknown.String() = %q; want unknown", got)
	}
	var zero middleware.SideEffect
	if zero != middleware.SideEffectNone {
		t.Error("the zero SideEffect is not SideEffectNone")
	}
}
