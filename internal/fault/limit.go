package fault

import (
	"fmt"
	"strings"
)

// Limit is a call the loop guard refused.
type Limit struct {
	Which    string // "repeat", "identical", "per tool", "total"
	Previous int    // calls counted against the limit
	Failed   bool   // every previous identical call failed
}

func (e *Limit) Error() string {
	return fmt.Sprintf("toolsafe: the loop guard refused the call (%s, %d before)", e.Which, e.Previous)
}

// Message is the model's message for a call of tool the loop guard refused.
func (e *Limit) Message(tool string) string {
	times := func(n int) string {
		if n == 1 {
			return "once"
		}
		return fmt.Sprintf("%d times", n)
	}
	var b strings.Builder
	switch e.Which {
	case "repeat", "identical":
		fmt.Fprintf(&b, "%s was not called: it was already called %s with this input in this request", tool, times(e.Previous))
		switch {
		case e.Which == "repeat" && e.Failed && e.Previous > 1:
			b.WriteString(" and failed each time")
		case e.Which == "repeat":
			b.WriteString(", and its last answer said not to call it again")
		default:
			b.WriteString(", the most allowed")
		}
		fmt.Fprintf(&b, ". Do not call %s again with this input; use what it answered, tell the user it is unavailable, or use another tool.", tool)
	case "per tool":
		fmt.Fprintf(&b, "%s was not called: it was already called %s in this request, the most allowed for it. Do not call it again in this request; go on without it.", tool, times(e.Previous))
	default:
		fmt.Fprintf(&b, "%s was not called: this request already made %d tool calls, the most allowed. Do not call more tools; answer the user with what you have.", tool, e.Previous)
	}
	return b.String()
}
