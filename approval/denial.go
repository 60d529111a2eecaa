package approval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolsafe/toolsafe/middleware"
)

// denial is the gate's answer to a call its approver said Denied to
// (middleware.KindApprovalDenied, not retried), with the message a person
// gave the model with it (Verdict.Message): plain text, bounded by the
// approver; "" when none.
type denial struct{ message string }

// errDenied is a denial without a message.
var errDenied = &denial{}

func (e *denial) Error() string { return "toolsafe: approval denied" }

// Report says the call's approval was denied: not retried.
func (e *denial) Report() (middleware.Kind, bool) { return middleware.KindApprovalDenied, false }

// Words quotes the person's message, if any, to the model as a Go string:
// no line break or control character reaches it unescaped; a message that
// ends its own sentence gets no second stop.
func (e *denial) Words(tool string) (why, next string) {
	if e.message == "" {
		return "", ""
	}
	stop := "."
	if strings.HasSuffix(e.message, ".") || strings.HasSuffix(e.message, "!") || strings.HasSuffix(e.message, "?") {
		stop = ""
	}
	return fmt.Sprintf("The user denied approval for %s, and said: %s%s", tool, strconv.Quote(e.message), stop),
		" Do not call it again for this request."
}
