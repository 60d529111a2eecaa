package policy

import "time"

// refusal is an attempt refused before it reached the tool by a layer
// that guards a dependency: the failsafe-go error that refused it
// (circuitbreaker.ErrOpen, bulkhead.ErrFull, a rate limiter's ErrExceeded,
// budget.ErrExceeded), which gives its kind, with the name of the
// dependency it guards and, for an open circuit, the time left before it
// lets a probe through: the model's message names both.
type refusal struct {
	err        error
	dependency string
	wait       time.Duration
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// Refused returns the dependency's name and the wait, for the call's
// failure (middleware.Failure's Dependency and Wait).
func (e *refusal) Refused() (dependency string, wait time.Duration) { return e.dependency, e.wait }

// refused returns err, a refusal by a layer that guards dependency, with
// wait, the time left before an open circuit lets a probe through (0 for
// none). refused(nil, ...) is nil.
func refused(err error, dependency string, wait time.Duration) error {
	if err == nil {
		return nil
	}
	return &refusal{err: err, dependency: dependency, wait: max(wait, 0)}
}
