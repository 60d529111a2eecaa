package call

import (
	"errors"

	"github.com/toolsafe/toolsafe/middleware"
)

// ForProgram is an error that the surface layer returns as the call's
// error, not as text for the model: the program's to fix, not the model's
// (a resumed run that its ledger does not hold). The surface returns Err,
// so the program sees the error the layer made.
type ForProgram struct{ Err error }

func (e *ForProgram) Error() string { return e.Err.Error() }
func (e *ForProgram) Unwrap() error { return e.Err }

// Pause returns the approval pause err holds, the first error of its tree
// that says its own kind is middleware.KindApprovalRequired (an
// *approval.Required), or nil: the surface returns it as the call's error,
// so the run pauses, knowing a pause by its kind alone.
func Pause(err error) error {
	for e := err; ; {
		k, ok := errors.AsType[kindedError](e)
		if !ok {
			return nil
		}
		if k.Kind() == middleware.KindApprovalRequired {
			return k
		}
		// Another error that says its kind wraps it: look below that one.
		if e = errors.Unwrap(k); e == nil {
			return nil
		}
	}
}

// kindedError is an error that says its own kind (middleware.Classify).
type kindedError interface {
	error
	Kind() middleware.Kind
}
