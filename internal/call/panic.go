package call

import (
	"fmt"

	"github.com/toolsafe/toolsafe/middleware"
)

// Panic is a panic recovered from a tool or an approver: tool-panic, not
// retried.
type Panic struct {
	Who   string // "the tool", "the approver"
	Value any
}

func (e *Panic) Error() string { return fmt.Sprintf("%s panicked: %v", e.Who, e.Value) }

// Report says the call failed with a panic: not retried.
func (e *Panic) Report() (middleware.Kind, bool) { return middleware.KindPanic, false }

// Words leaves the model the words of a panic: they never quote its value.
func (e *Panic) Words(string) (why, next string) { return "", "" }

// Goexit is how an attempt ends whose tool called runtime.Goexit.
var Goexit = &Panic{Who: "the tool", Value: "runtime.Goexit"}
