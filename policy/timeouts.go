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

// MaxAbandoned caps the attempts of one tool that its attempt timeout
// abandoned (the tool ignored its context) and that are still running:
// past the cap, calls are refused at once with tool-busy, saying earlier
// calls are still stuck, instead of piling up goroutines and load. It is
// a count of attempts. Give it to toolsafe.WithTimeout beside the timeout
// it belongs to: WithTimeout(2*time.Second, policy.MaxAbandoned(16)).
// Zero means the default of 64; a negative cap is a configuration error.
type MaxAbandoned int

// Validate reports a negative cap; zero, the default, is valid.
func (m MaxAbandoned) Validate() error {
	if m < 0 {
		return fmt.Errorf("max abandoned %d is negative: use 0 for the default of 64, or a count such as 16", int(m))
	}
	return nil
}
