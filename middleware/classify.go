package middleware

import (
	"cmp"
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
)

// Classify returns the kind of failure err stands for and whether another
// attempt may succeed. It is the one table of toolsafe's taxonomy, and it
// looks at types only (errors.As, errors.Is), never at message text, through
// any depth of wrapping, the first matching row winning:
//
//	err                                              kind                retryable
//	nil                                              ""                  false
//	an error with a method Kind() Kind,
//	  as an approval pause (approval.Required)       that Kind           false
//	*Failure                                         its Kind            its Retryable
//	a denial by the approval gate                    approval-denied     false
//	*ArgsError                                       args-invalid        false
//	a recovered panic                                tool-panic          false
//	Permanent(err)                                   tool-failed         false
//	a refusal by the loop guard                      call-limit          false
//	the run ledger's record unreadable (corrupt)     tool-failed         false
//	the run ledger unavailable (its store is down)   tool-busy           true
//	circuitbreaker.ErrOpen                           circuit-open        false
//	bulkhead.ErrFull, ratelimiter.ErrExceeded,
//	  adaptivelimiter.ErrExceeded,
//	  adaptivethrottler.ErrExceeded,
//	  earlier attempts still stuck                   tool-busy           false
//	budget.ErrExceeded                               budget-exceeded     false
//	timeout.ErrExceeded, the attempt timeout         tool-timeout        true
//	retrypolicy.ErrExceeded (a retry of your own)    tool-failed         false
//	Transient(err), RetryAfter(err, d),
//	  NotApplied(err)                                tool-failed         true
//	*ToolError, Retryable                            tool-failed         true
//	*ToolError                                       tool-error          false
//	failsafe.ErrExecutionCanceled (a lost hedge)     tool-failed         true
//	anything else (a foreign error)                  tool-failed         true
//
// The errors of toolsafe's own layers (the gate's denial, a recovered
// panic, the loop guard's refusal, the run ledger's, the attempt timeout's
// refusals) report their kind and retryability themselves, and rank at the
// row of the table that names them; one that keeps the kind of the error it
// wraps but says it may not be retried (an attempt of a tool without an
// idempotency key that may have been applied) outranks every row.
//
// Cancellation is not decided here: only the layer that owns a context knows
// whether it ended, and why. A *Failure or an error with a Kind method whose
// Kind is none of Kinds() (a tool's own type naming its kind from an
// upstream's answer) matches no row of its own: the Kind is a label of
// metrics and spans, and must be one of the taxonomy's, never an upstream's
// words.
//
// It walks err's tree once, in the order errors.As does, noting for each
// row the first error that matches it, and allocates nothing.
func Classify(err error) (Kind, bool) {
	if err == nil {
		return "", false
	}
	var s scan
	s.walk(err)
	switch {
	case s.final != nil:
		kind, _ := Classify(errors.Unwrap(s.final))
		return kind, false
	case s.kinded != nil:
		return s.kinded.Kind(), false
	case s.failure != nil:
		return s.failure.Kind, s.failure.Retryable
	}
	for _, r := range rowKinds {
		if s.rows&r.row != 0 {
			return r.kind, r.retryable
		}
	}
	if s.tool != nil && !s.tool.retryable && s.rows&rowMarker == 0 {
		return KindToolError, false
	}
	return KindFailed, true
}

// The rows of Classify's table that a type or a sentinel decides, as bits
// of scan.rows.
const (
	rowDenied = 1 << iota
	rowArgs
	rowPanic
	rowPermanent
	rowLimit
	rowCorrupt
	rowUnavailable
	rowOpen
	rowBusy
	rowBudget
	rowTimeout
	rowExceeded
	rowMarker // Transient, RetryAfter or NotApplied: not a row, but it outranks a ToolError
)

// rowKinds is the kind and retryability of each row, in the table's order,
// and whether an error that reports that kind and retryability itself (a
// reporter) ranks at it.
var rowKinds = [...]struct {
	row       uint16
	kind      Kind
	retryable bool
	reported  bool
}{
	{rowDenied, KindApprovalDenied, false, true}, // the gate's denial
	{rowArgs, KindArgsInvalid, false, false},
	{rowPanic, KindPanic, false, true}, // a panic the tool's or the approver's layer recovered
	{rowPermanent, KindFailed, false, false},
	{rowLimit, KindCallLimit, false, true}, // the loop guard's refusal
	{rowCorrupt, KindFailed, false, true},  // the run ledger's record unreadable
	{rowUnavailable, KindBusy, true, true}, // the run ledger unavailable
	{rowOpen, KindCircuitOpen, false, false},
	{rowBusy, KindBusy, false, true}, // earlier attempts stuck, or too many in flight
	{rowBudget, KindBudget, false, false},
	{rowTimeout, KindTimeout, true, false},
	{rowExceeded, KindFailed, false, false},
}

// reporter is an error of one of toolsafe's own layers that says what it
// is: its kind of failure, whether another attempt may succeed, and what
// the model reads of it. Classify ranks it at the row of its table that
// rowKinds marks for its kind and retryability; a kind of "" keeps the kind
// of the error it wraps and says another attempt may not succeed, and
// outranks every row. The packages that own the layers define them: none
// is a tool author's concern.
type reporter interface {
	error
	// Report returns the error's kind and whether another attempt may
	// succeed.
	Report() (kind Kind, retryable bool)
	// Words returns what the model reads of a call of tool that failed
	// with the error: why it failed, and what to do next; "" for why
	// leaves the words of its kind (see Failure.Error). For a call refused
	// before its attempt (tool-busy), why follows "X was not called: ",
	// and next, when not "", ends the message; for the other kinds why and
	// next are the whole message.
	Words(tool string) (why, next string)
}

// reportedRow is the row at which a reporter of kind and retryable ranks;
// 0, no row, when the table marks none.
func reportedRow(kind Kind, retryable bool) uint16 {
	for _, r := range rowKinds {
		if r.reported && r.kind == kind && r.retryable == retryable {
			return r.row
		}
	}
	return 0
}

// lookFor are the errors Classify looks for with errors.Is, and their row.
var lookFor = [...]struct {
	err error
	row uint16
}{
	{circuitbreaker.ErrOpen, rowOpen},
	{bulkhead.ErrFull, rowBusy},
	{ratelimiter.ErrExceeded, rowBusy},
	{adaptivelimiter.ErrExceeded, rowBusy},
	{adaptivethrottler.ErrExceeded, rowBusy},
	{budget.ErrExceeded, rowBudget},
	{timeout.ErrExceeded, rowTimeout},
	{retrypolicy.ErrExceeded, rowExceeded},
}

// scan is what one walk over an error's tree found: the rows matched, and
// the first error of each type whose value Classify reads.
type scan struct {
	rows    uint16
	final   error // the first reporter of kind "": the layers' mark that it may not be retried
	kinded  kinded
	failure *Failure
	tool    *ToolError
}

// walk notes what err and the errors it wraps match, depth first as
// errors.As goes.
func (s *scan) walk(err error) {
	for err != nil {
		s.note(err)
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				s.walk(e)
			}
			return
		default:
			return
		}
	}
}

// note notes what err itself matches: by its type, then, as errors.As
// asks, by its As method if it has one.
func (s *scan) note(err error) {
	switch e := err.(type) {
	case reporter:
		s.report(e)
	case *Failure:
		s.fail(e)
	case *ArgsError:
		s.rows |= rowArgs
	case *permanentError:
		s.rows |= rowPermanent
	case *ToolError:
		s.tool = cmp.Or(s.tool, e)
	case *transientError, *retryAfterError, *notAppliedError:
		s.rows |= rowMarker
	}
	if k, ok := err.(kinded); ok {
		s.kind(k)
	}
	if as, ok := err.(interface{ As(any) bool }); ok {
		s.noteAs(as)
	}
	is, hasIs := err.(interface{ Is(error) bool })
	for _, t := range lookFor {
		if s.rows&t.row == 0 && (err == t.err || hasIs && is.Is(t.err)) {
			s.rows |= t.row
		}
	}
}

// noteAs notes what an error's As method says it is, for each type Classify
// reads: an error that is another through its As method counts as that one,
// as it does for errors.As.
func (s *scan) noteAs(as interface{ As(any) bool }) {
	var r reporter
	if as.As(&r) && r != nil {
		s.report(r)
	}
	if f, ok := asTarget[*Failure](as); ok && f != nil {
		s.fail(f)
	}
	if _, ok := asTarget[*ArgsError](as); ok {
		s.rows |= rowArgs
	}
	if _, ok := asTarget[*permanentError](as); ok {
		s.rows |= rowPermanent
	}
	if te, ok := asTarget[*ToolError](as); ok && te != nil {
		s.tool = cmp.Or(s.tool, te)
	}
	_, t := asTarget[*transientError](as)
	_, ra := asTarget[*retryAfterError](as)
	_, na := asTarget[*notAppliedError](as)
	if t || ra || na {
		s.rows |= rowMarker
	}
	var k kinded
	if as.As(&k) && k != nil {
		s.kind(k)
	}
}

// asTarget asks as for an E, as errors.As asks an error's As method.
func asTarget[E any](as interface{ As(any) bool }) (E, bool) {
	var e E
	ok := as.As(&e)
	return e, ok
}

// report notes a reporter: the first of kind "" is the layers' mark that
// the call may not be retried; another ranks at its row.
func (s *scan) report(r reporter) {
	if kind, retryable := r.Report(); kind == "" {
		s.final = cmp.Or(s.final, error(r))
	} else {
		s.rows |= reportedRow(kind, retryable)
	}
}

// fail notes a *Failure whose Kind is one of Kinds().
func (s *scan) fail(f *Failure) {
	if f.Kind.Err() != nil {
		s.failure = cmp.Or(s.failure, f)
	}
}

// kind notes an error that says its own kind, one of Kinds().
func (s *scan) kind(k kinded) {
	if s.kinded == nil && k.Kind().Err() != nil {
		s.kinded = k
	}
}

// eachReporter calls visit with each reporter in err's tree, in the order
// errors.As looks (an error's As method asked for one too), until visit
// returns false. It reports false when visit did.
func eachReporter(err error, visit func(reporter) bool) bool {
	for err != nil {
		if r, ok := err.(reporter); ok {
			if !visit(r) {
				return false
			}
		} else if as, ok := err.(interface{ As(any) bool }); ok {
			var r reporter
			if as.As(&r) && r != nil && !visit(r) {
				return false
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if !eachReporter(e, visit) {
					return false
				}
			}
			return true
		default:
			return true
		}
	}
	return true
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
	_, t := errors.AsType[*transientError](err)
	_, ra := errors.AsType[*retryAfterError](err)
	_, na := errors.AsType[*notAppliedError](err)
	return t || ra || na
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
