package policy

import (
	"fmt"
	"time"
)

// ValidateTimeouts reports an attempt timeout that can never take effect:
// one longer than the call's deadline, which would always cut the attempt
// short first. Zero for either means no limit, and is always valid.
// toolsafe.New and the policies file both check with it.
func ValidateTimeouts(attempt, deadline time.Duration) error {
	if attempt > 0 && deadline > 0 && attempt > deadline {
		return fmt.Errorf("attempt timeout %v is longer than the deadline %v: the deadline would always cut the attempt short; make the timeout shorter or the deadline longer", attempt, deadline)
	}
	return nil
}
