package middleware

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/toolsafe/toolsafe/internal/fault"
)

// Classify returns the kind of failure err stands for and whether another
// attempt may succeed. It is the one table of toolsafe's taxonomy, and it
// looks at types only (errors.As, errors.Is), never at message text, through
// any depth of wrapping, the first matching row winning:
//
//	err                                              kind                retryable
//	nil                                              ""                  false
//	an approval pause (approval.Required)            approval-required   false
//	*Failure                                         its Kind            its Retryable
//	a denial by the approval gate                    approval-denied     false
//	*ArgsError                                       args-invalid        false
//	a recovered panic                                tool-panic          false
//	Permanent(err)                                   tool-failed         false
//	a refusal by the loop guard                      call-limit          false
//	circuitbreaker.ErrOpen                           circuit-open        false
//	bulkhead.ErrFull, ratelimiter.ErrExceeded,
//	  adaptivelimiter.ErrExceeded,
//	  adaptivethrottler.ErrExceeded,
//	  earlier attempts still stuck                   tool-busy           false
//	budget.ErrExceeded                               budget-exceeded     false
//	timeout.ErrExceeded, the attempt timeout         tool-timeout        true
//	retrypolicy.ErrExceeded (a retry of your own)    tool-failed         false
//	Transient(err), RetryAfter(err, d)               tool-failed         true
//	*ToolError, Retryable                            tool-failed         true
//	*ToolError                                       tool-error          false
//	failsafe.ErrExecutionCanceled (a lost hedge)     tool-failed         true
//	anything else (a foreign error)                  tool-failed         true
//
// Cancellation is not decided here: only the layer that owns a context knows
// whether it ended, and why.
func Classify(err error) (Kind, bool) {
	if err == nil {
		return "", false
	}
	var fe *fault.Final
	if errors.As(err, &fe) {
		kind, _ := Classify(fe.Err)
		return kind, false
	}
	var k kinded
	var f *Failure
	var ae *ArgsError
	var pe *fault.Panic
	var perm *permanentError
	switch {
	case errors.As(err, &k):
		return k.Kind(), false
	case errors.As(err, &f):
		return f.Kind, f.Retryable
	case errors.Is(err, fault.ErrDenied):
		return KindApprovalDenied, false
	case errors.As(err, &ae):
		return KindArgsInvalid, false
	case errors.As(err, &pe):
		return KindPanic, false
	case errors.As(err, &perm):
		return KindFailed, false
	case errors.As(err, new(*fault.Limit)):
		return KindCallLimit, false
	case errors.As(err, new(*fault.Unavailable)):
		return KindBusy, false
	case errors.Is(err, circuitbreaker.ErrOpen):
		return KindCircuitOpen, false
	case errors.Is(err, bulkhead.ErrFull), errors.Is(err, ratelimiter.ErrExceeded),
		errors.Is(err, adaptivelimiter.ErrExceeded), errors.Is(err, adaptivethrottler.ErrExceeded),
		errors.Is(err, fault.ErrStuck), errors.Is(err, fault.ErrTooMany):
		return KindBusy, false
	case errors.Is(err, budget.ErrExceeded):
		return KindBudget, false
	case errors.Is(err, timeout.ErrExceeded):
		return KindTimeout, true
	case errors.Is(err, retrypolicy.ErrExceeded):
		return KindFailed, false
	}
	var te *ToolError
	if errors.As(err, &te) && !te.retryable && !hasMarker(err) {
		return KindToolError, false
	}
	return KindFailed, true
}

// kinded is an error that says its own kind: approval.Required, the pause,
// is one.
type kinded interface {
	error
	Kind() Kind
}

// hasMarker reports whether err carries a Transient or RetryAfter mark,
// which wins over a ToolError further down the chain.
func hasMarker(err error) bool {
	var t *transientError
	var ra *retryAfterError
	return errors.As(err, &t) || errors.As(err, &ra)
}

// Reason returns a short, model-safe description of err derived from its
// type only: a ToolError's own message, "HTTP 503 Service Unavailable", "the
// connection was reset", and so on; "" when the type says nothing useful. It
// never contains the text of a foreign error, nor that of an
// UpstreamToolError, which it withholds, giving its size in bytes.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	var te *ToolError
	var he *HTTPError
	var ne net.Error
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &te) && !hasMarker(err):
		return te.safeText()
	case errors.As(err, &he):
		return fmt.Sprintf("HTTP %d %s", he.StatusCode, httpStatusText(he.StatusCode))
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection closed before the answer was complete"
	case errors.As(err, &dns):
		return "the host name did not resolve"
	case errors.As(err, &ne) && ne.Timeout():
		return "a network timeout"
	case errors.As(err, &op):
		return "a network error"
	case errors.As(err, &te):
		return te.safeText()
	}
	return ""
}

// safeText is e's message for a span or a log line: the text itself, or,
// for an upstream's text, its size.
func (e *ToolError) safeText() string {
	if e.upstream {
		return fmt.Sprintf("its upstream's message, withheld (%d bytes): it may quote the arguments", len(e.msg))
	}
	return e.msg
}
