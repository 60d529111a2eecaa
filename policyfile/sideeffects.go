package policyfile

import (
	"fmt"
	"maps"
	"slices"

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

// unknownServer says, when server is a likely typo of a server the file
// names under mcp_servers, that the file does not name it: the program's
// name for a server and the file's disagree, which leaves the server
// untrusted. It is "" otherwise: most servers a file leaves out are meant
// to stay untrusted.
func (c *File) unknownServer(server string) string {
	if server == "" || len(c.mcpServers) == 0 || c.mcpServers[server] != nil {
		return ""
	}
	meant := suggest(server, slices.Sorted(maps.Keys(c.mcpServers)))
	if meant == "" {
		return ""
	}
	return fmt.Sprintf("server %q is not under mcp_servers%s", server, meant)
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
// for a tool with hints; none, for one without). When h's server is not
// under mcp_servers but a likely typo of one that is, it says so, with
// the name it likely meant: the server is then untrusted.
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
	} else if note := c.unknownServer(h.Server); note != "" {
		out += "; " + note
	}
	switch {
	case candidate && r.approval == approvalNone:
		out += fmt.Sprintf("; approval candidate: destructive (%s), not gated: set approval: every_attempt to gate it", candidateFrom)
	case candidate:
		out += fmt.Sprintf("; approval candidate: destructive (%s), approval %s", candidateFrom, r.approval)
	}
	return out
}
