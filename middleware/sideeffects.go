package middleware

// SideEffects says whether a tool changes something upstream and, if it
// does, whether a retried attempt is safe. The zero value, NoSideEffects,
// is the right one for a tool that only reads.
type SideEffects int

const (
	// NoSideEffects marks a tool that only reads: any transient failure
	// may be retried. The default.
	NoSideEffects SideEffects = iota
	// SideEffectsWithKey marks a tool that changes something upstream and
	// sends IdempotencyKey(ctx) with every attempt (the Idempotency-Key
	// HTTP header), so the upstream applies the attempts of one call once.
	// It is retried like a tool that only reads; a failure whose outcome is
	// unknown is still reported with SideEffectUnknown, because calling the
	// tool again is a new call with a new key.
	SideEffectsWithKey
	// SideEffectsWithoutKey marks a tool that changes something upstream
	// and cannot tell the upstream that two attempts are one action. It is
	// retried only after a failure that proves the action was not applied
	// (see the side-effect guard); any other failure ends the call at once with
	// SideEffectUnknown, and the model is told to check before calling
	// again.
	SideEffectsWithoutKey
)

// String returns "none", "with-key" or "without-key".
func (s SideEffects) String() string {
	switch s {
	case SideEffectsWithKey:
		return "with-key"
	case SideEffectsWithoutKey:
		return "without-key"
	}
	return "none"
}
