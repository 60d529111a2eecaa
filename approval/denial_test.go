package approval

import (
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

// A person's denial message that ends its own sentence read
// `said: "Over 100 EUR needs a ticket.". Do not call…`: one stop too many.
func TestADenialMessageThatEndsItsSentenceGetsNoSecondStop(t *testing.T) {
	for _, tt := range []struct{ msg, want string }{
		{"Over 100 EUR needs a ticket.", `said: "Over 100 EUR needs a ticket." Do not call it again for this request.`},
		{"Ask finance first!", `said: "Ask finance first!" Do not call it again`},
		{"Why this amount?", `said: "Why this amount?" Do not call it again`},
		{"ask finance first", `said: "ask finance first". Do not call it again`},
	} {
		f := &middleware.Failure{Kind: middleware.KindApprovalDenied, Tool: "refund", Cause: &denial{message: tt.msg}}
		if got := f.Error(); !strings.Contains(got, tt.want) {
			t.Errorf("%q: the model reads %q; want it to contain %q", tt.msg, got, tt.want)
		}
	}
}

func TestADenialIsApprovalDeniedAndNotRetried(t *testing.T) {
	for _, err := range []error{errDenied, &denial{message: "no"}} {
		if kind, retryable := middleware.Classify(err); kind != middleware.KindApprovalDenied || retryable {
			t.Errorf("Classify(%v) = %q, %v; want %q, false", err, kind, retryable, middleware.KindApprovalDenied)
		}
	}
	f := &middleware.Failure{Kind: middleware.KindApprovalDenied, Tool: "refund", Cause: errDenied}
	if want := "The user denied approval for refund. Do not call it again for this request."; f.Error() != want {
		t.Errorf("the model reads %q; want %q", f.Error(), want)
	}
}
