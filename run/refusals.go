package run

import (
	"fmt"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
)

// refusal is a call the loop guard refused (middleware.KindCallLimit): no
// attempt was made, and it is not retried.
type refusal struct {
	which    string // "repeat", "identical", "per tool", "total"
	previous int    // calls counted against the limit
	failed   bool   // every previous identical call failed
}

func (e *refusal) Error() string {
	return fmt.Sprintf("toolsafe: the loop guard refused the call (%s, %d before)", e.which, e.previous)
}

// Report says the loop guard refused the call: not retried.
func (e *refusal) Report() (middleware.Kind, bool) { return middleware.KindCallLimit, false }

// Words tells the model which limit refused its call of tool, and what to
// do instead.
func (e *refusal) Words(tool string) (why, next string) {
	times := func(n int) string {
		if n == 1 {
			return "once"
		}
		return fmt.Sprintf("%d times", n)
	}
	var b strings.Builder
	switch e.which {
	case "repeat", "identical":
		fmt.Fprintf(&b, "%s was not called: it was already called %s with this input in this request", tool, times(e.previous))
		switch {
		case e.which == "repeat" && e.failed && e.previous > 1:
			b.WriteString(" and failed each time")
		case e.which == "repeat":
			b.WriteString(", and its last answer said not to call it again")
		default:
			b.WriteString(", the most allowed")
		}
		fmt.Fprintf(&b, ". Do not call %s again with this input; use what it answered, tell the user it is unavailable, or use another tool.", tool)
	case "per tool":
		fmt.Fprintf(&b, "%s was not called: it was already called %s in this request, the most allowed for it. Do not call it again in this request; go on without it.", tool, times(e.previous))
	default:
		fmt.Fprintf(&b, "%s was not called: this request already made %d tool calls, the most allowed. Do not call more tools; answer the user with what you have.", tool, e.previous)
	}
	return b.String(), ""
}

// unavailable is a call that was not made because the run ledger, which
// must record it first, could not: the store's condition, which passes,
// not the tool's failure (middleware.KindBusy, retried).
type unavailable struct{ err error }

func (e *unavailable) Error() string {
	return "toolsafe: the run ledger is unavailable, so the call was not made: " + e.err.Error()
}
func (e *unavailable) Unwrap() error { return e.err }

// Report says the call was refused for now: another attempt may succeed.
func (e *unavailable) Report() (middleware.Kind, bool) { return middleware.KindBusy, true }

// Words tells the model that the record of its calls is unavailable for a
// moment, and what to do.
func (e *unavailable) Words(tool string) (why, next string) {
	return fmt.Sprintf("the record of this request's calls, which %s must be entered in before it runs so that it is never applied twice, is temporarily unavailable.", tool),
		fmt.Sprintf(" Try again in a moment; if it is still unavailable, tell the user that %s is temporarily unavailable and to try again later.", tool)
}

// corrupt is a call that was not made because the run ledger holds a
// record of it (or counts) that cannot be read: not an outage, which
// passes, so the call fails for good (middleware.KindFailed, not retried).
type corrupt struct{ err error }

func (e *corrupt) Error() string {
	return "toolsafe: the run ledger's record of the call cannot be read, so the call was not made: " + e.err.Error()
}
func (e *corrupt) Unwrap() error { return e.err }

// Report says the call failed for good.
func (e *corrupt) Report() (middleware.Kind, bool) { return middleware.KindFailed, false }

// Words tells the model that the record of the call is damaged, and that
// someone must look at it.
func (e *corrupt) Words(tool string) (why, next string) {
	return fmt.Sprintf("%s was not called: the record of this request's calls, which tells whether %s was already applied, cannot be read for this call (it is damaged).", tool, tool),
		fmt.Sprintf(" Do not call %s again with this input; tell the user that %s could not be checked and that someone must look at it.", tool, tool)
}
