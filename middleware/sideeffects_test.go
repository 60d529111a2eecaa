package middleware_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestSideEffectsSayWhatTheyAre(t *testing.T) {
	var zero middleware.SideEffects
	if zero != middleware.NoSideEffects {
		t.Error("the zero SideEffects is not NoSideEffects: a tool that only reads would need to say so")
	}
	for s, want := range map[middleware.SideEffects]string{
		middleware.NoSideEffects: "none", middleware.SideEffectsWithKey: "with-key", middleware.SideEffectsWithoutKey: "without-key",
	} {
		if s.String() != want {
			t.Errorf("%d.String() = %q; want %q", s, s.String(), want)
		}
	}
}
