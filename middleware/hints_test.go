package middleware_test

import (
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

// Issue 27: an MCP tool with no annotations is, by the specification, not
// read-only, destructive and not idempotent; hints from a server nobody
// trusts only tighten, and loosen only when the program trusts it.
func TestHintsTightenUnlessTrusted(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	for _, tt := range []struct {
		name        string
		h           middleware.Hints
		effects     middleware.SideEffects
		from        string
		candidate   bool
		candidateOf string
	}{
		{"no annotations", middleware.Hints{}, middleware.SideEffectsWithoutKey, middleware.FromDefault, true, middleware.FromDefault},
		{"no annotations, trusted", middleware.Hints{Trusted: true}, middleware.SideEffectsWithoutKey, middleware.FromDefault, true, middleware.FromDefault},
		{"read-only, untrusted, loosens nothing", middleware.Hints{ReadOnly: yes}, middleware.SideEffectsWithoutKey, middleware.FromHint, true, middleware.FromDefault},
		{"read-only, trusted", middleware.Hints{ReadOnly: yes, Trusted: true}, middleware.NoSideEffects, middleware.FromTrustedHint, false, middleware.FromTrustedHint},
		{"idempotent, untrusted", middleware.Hints{Idempotent: yes, Destructive: no}, middleware.SideEffectsWithoutKey, middleware.FromHint, false, middleware.FromHint},
		{"idempotent, trusted", middleware.Hints{Idempotent: yes, Trusted: true}, middleware.SideEffectsWithKey, middleware.FromTrustedHint, true, middleware.FromDefault},
		{"a write, trusted", middleware.Hints{ReadOnly: no, Idempotent: no, Destructive: yes, Trusted: true}, middleware.SideEffectsWithoutKey, middleware.FromTrustedHint, true, middleware.FromTrustedHint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			effects, from := tt.h.SideEffects()
			candidate, candidateOf := tt.h.ApprovalCandidate()
			if effects != tt.effects || from != tt.from || candidate != tt.candidate || candidateOf != tt.candidateOf {
				t.Errorf("side effects %v (%s), approval candidate %v (%s); want %v (%s), %v (%s)",
					effects, from, candidate, candidateOf, tt.effects, tt.from, tt.candidate, tt.candidateOf)
			}
		})
	}
}
