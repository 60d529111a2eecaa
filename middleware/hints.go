package middleware

// Hints are what a tool's provider declares of its behaviour, as an MCP
// server's tool annotations do (schema ToolAnnotations): whether the tool
// only reads, whether it may destroy, and whether a second call with the
// same arguments does nothing more. Nil means not declared, which takes the
// MCP specification's default: not read-only, destructive, not idempotent.
//
// The provider wrote them, and the specification says a client must take
// them as untrusted unless they come from a trusted server: unless Trusted,
// they only tighten (see SideEffects and ApprovalCandidate).
type Hints struct {
	// ReadOnly, Destructive and Idempotent are MCP's readOnlyHint,
	// destructiveHint and idempotentHint; nil when the provider said nothing.
	ReadOnly, Destructive, Idempotent *bool
	// Trusted says the program trusts the provider's hints
	// (mcptools.WithTrusted, or a policies file's mcp_servers entry with
	// trusted: true): then they loosen too.
	Trusted bool
	// Server is the name the program knows the provider by
	// (mcptools.WithServerName), under which a policies file can trust it;
	// "" for none. It is never the name a server gives itself.
	Server string
}

// Where a side-effect class came from, as SideEffects and
// ApprovalCandidate name it (and policyfile adds "setting" for its own).
const (
	// FromDefault: the provider declared nothing, so the MCP default holds.
	FromDefault = "default"
	// FromHint: an untrusted provider's hint, which can only tighten.
	FromHint = "hint"
	// FromTrustedHint: a trusted provider's hint.
	FromTrustedHint = "trusted hint"
)

// HintedTool is a tool that declares Hints of its own, as the tools of
// package mcptools do. toolsafe.New takes the tool's side effects from
// Hints().SideEffects() unless WithSideEffects or WithDestructive is
// given; policyfile and the toolsafe command report them. Hints must be
// safe for concurrent use and return the same value every time.
type HintedTool interface {
	Hints() Hints
}

// SideEffects returns the side effects the hints give a tool, and where
// they came from (FromDefault, FromHint, FromTrustedHint):
//
//   - untrusted: SideEffectsWithoutKey, whatever the hints say; read-only
//     and idempotent hints loosen nothing, so a tool is retried only after a
//     failure that proves nothing was applied. From FromDefault when neither
//     readOnlyHint nor idempotentHint was given, else FromHint;
//   - trusted: readOnlyHint true gives NoSideEffects (retried freely);
//     idempotentHint true gives SideEffectsWithKey (retried after an
//     outcome that is unknown, as a tool that sends a key is: the server
//     says a repeat changes nothing more); otherwise SideEffectsWithoutKey.
//     From FromTrustedHint, or FromDefault when neither hint was given.
func (h Hints) SideEffects() (SideEffects, string) {
	said := h.ReadOnly != nil || h.Idempotent != nil
	switch {
	case !h.Trusted && said:
		return SideEffectsWithoutKey, FromHint
	case !h.Trusted || !said:
		return SideEffectsWithoutKey, FromDefault
	case isTrue(h.ReadOnly):
		return NoSideEffects, FromTrustedHint
	case isTrue(h.Idempotent):
		return SideEffectsWithKey, FromTrustedHint
	}
	return SideEffectsWithoutKey, FromTrustedHint
}

// ApprovalCandidate reports whether the hints make the tool a candidate for
// an approval gate, and where that came from: a destructiveHint that is
// true or absent (MCP's default is destructive), except, from a trusted
// provider, for a tool that is read-only (the specification gives
// destructiveHint meaning only when readOnlyHint is false). It is a report:
// no gate is placed without an approver of the program's
// (toolsafe.WithApproval, WithDestructive).
func (h Hints) ApprovalCandidate() (bool, string) {
	from := FromHint
	if h.Trusted {
		from = FromTrustedHint
	}
	if h.Trusted && isTrue(h.ReadOnly) {
		return false, from
	}
	if h.Destructive == nil {
		return true, FromDefault
	}
	return *h.Destructive, from
}

func isTrue(b *bool) bool { return b != nil && *b }
