package approval

// GateMode says how often an approval gate asks its Approver: once per
// call (ApproveCall, the zero value) or before every attempt
// (ApproveEachAttempt). Give it to toolsafe.WithApproval beside the
// approver it belongs to.
type GateMode int

const (
	// ApproveCall asks once per call: the approval of the first attempt
	// covers the retries of the same call (same input, same idempotency
	// key). For a tool whose retries are harmless, or idempotent. It is the
	// zero GateMode.
	ApproveCall GateMode = iota
	// ApproveEachAttempt asks before every attempt, so each consumes an
	// approval of its own: a retry after a timeout pauses for a fresh one
	// instead of repeating a destructive action nobody re-approved. A tool
	// gated so is destructive: without toolsafe.WithSideEffects it is taken
	// to have side effects without an idempotency key.
	ApproveEachAttempt
)
