// Package callkey holds the context keys of a toolsafe call: that of the
// call record (package internal/call sets it) and that of the number of
// the attempt running (the attempt timeout sets it). Package middleware
// reads them (IdempotencyKey, CallID, AttemptNumber), so they live apart
// from the record, in a package that imports nothing.
package callkey

// Call is the context key of the call record.
type Call struct{}

// Attempt is the context key of the number of the attempt running: 1 for
// the first.
type Attempt struct{}
