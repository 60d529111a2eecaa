package policyfile

import (
	"fmt"

	"github.com/toolsafe/toolsafe/middleware"
)

// fromSetting is where the side effects a policies file sets come from.
const fromSetting = "setting"

// hintedSideEffects returns the side effects of the resolved tool r whose
// hints are h, and where they come from: the file's side_effects or
// approval every_attempt (a setting, which always wins), else the hints,
// trusted when the program trusts the server or the file's mcp_servers
// entry for it says trusted: true (see middleware.Hints.SideEffects).
func (c *File) hintedSideEffects(r resolved, h middleware.Hints) (middleware.SideEffects, string) {
	switch {
	case r.sideSet:
		return sideEffectsOf(r.sideEffects), fromSetting
	case r.approval == approvalEveryAttempt:
		return middleware.SideEffectsWithoutKey, fromSetting
	}
	h.Trusted = h.Trusted || c.trusts(h.Server)
	return h.SideEffects()
}

// sideEffectsOf is the middleware.SideEffects of a side_effects value.
func sideEffectsOf(v string) middleware.SideEffects {
	switch v {
	case sideEffectsIdempotent:
		return middleware.SideEffectsWithKey
	case sideEffectsNot:
		return middleware.SideEffectsWithoutKey
	}
	return middleware.NoSideEffects
}

// sideEffectsName is the side_effects value of s.
func sideEffectsName(s middleware.SideEffects) string {
	switch s {
	case middleware.SideEffectsWithKey:
		return sideEffectsIdempotent
	case middleware.SideEffectsWithoutKey:
		return sideEffectsNot
	}
	return sideEffectsNone
}

// DescribeSideEffects says, for a reviewer, what side effects WrapAll gives
// the tool called name and where they come from, such as "side effects
// not_idempotent (hint); approval candidate: destructive (default), not
// gated" for an MCP tool whose server's annotations are untrusted. h is
// the tool's hints (middleware.HintedTool, as an MCP tool's Hints), or nil
// for a tool without: its side effects are then the file's, or none. The
// sources are "setting" (the file's side_effects, or approval
// every_attempt, which always wins), "hint" (an untrusted server's, which
// only tightens), "trusted hint" (a server the program or the file's
// mcp_servers trusts) and "default" (nothing declared: the MCP default,
// for a tool with hints; none, for one without).
func (c *File) DescribeSideEffects(name string, h *middleware.Hints) string {
	r := c.resolve(name)
	if h == nil {
		from := fromSetting
		if !r.sideSet {
			from = middleware.FromDefault
		}
		if r.approval == approvalEveryAttempt && !r.sideSet {
			return fmt.Sprintf("side effects %s (%s)", sideEffectsNot, fromSetting)
		}
		return fmt.Sprintf("side effects %s (%s)", r.sideEffects, from)
	}
	s, from := c.hintedSideEffects(r, *h)
	trusted := *h
	trusted.Trusted = h.Trusted || c.trusts(h.Server)
	candidate, candidateFrom := trusted.ApprovalCandidate()
	out := fmt.Sprintf("side effects %s (%s)", sideEffectsName(s), from)
	if trusted.Trusted {
		out += "; server trusted"
	}
	switch {
	case candidate && r.approval == approvalNone:
		out += fmt.Sprintf("; approval candidate: destructive (%s), not gated: set approval: every_attempt to gate it", candidateFrom)
	case candidate:
		out += fmt.Sprintf("; approval candidate: destructive (%s), approval %s", candidateFrom, r.approval)
	}
	return out
}
