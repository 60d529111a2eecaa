package middleware

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// Failure is how a call failed, for good or for one attempt. Its Error
// method is the model-facing message: short, built from the fields below and
// never from the text of a foreign error. The zero Failure is not useful;
// layers fill it in.
type Failure struct {
	// Kind is the class of failure (DESIGN.md §3).
	Kind Kind
	// Tool is the name of the tool that failed.
	Tool string
	// Attempts is how many attempts were made; 0 when none was (args-invalid,
	// circuit-open before the first attempt).
	Attempts int
	// Elapsed is the time the whole call took, waits included.
	Elapsed time.Duration
	// Retryable reports whether calling again with the same input may
	// succeed. After toolsafe's retries ran out it is false: the model should
	// not repeat the identical call.
	Retryable bool
	// SideEffect says whether the action may have been applied.
	SideEffect SideEffect
	// Cause is the error behind the failure. Its text is for logs only.
	Cause error
	// Wait is how long the upstream asked to wait before the next try
	// (Retry-After), when that wait did not fit in the call's time; 0 if none.
	Wait time.Duration
	// Timeout is the limit that expired, for KindTimeout: the attempt timeout
	// or the call's deadline; 0 if unknown.
	Timeout time.Duration
	// Detail is model-safe text that says more: the argument problem for
	// args-invalid, the dependency for circuit-open and tool-busy, and for
	// tool-timeout what the call was still waiting for when its time ran out
	// before the attempt began ("still waiting for approval"; "" when the
	// time ran out during an attempt or a wait between attempts). Never raw
	// error text.
	Detail string
	// FallbackFailure is how the fallback tool failed, when the call was
	// routed to one (see package fallback) and it failed too; nil otherwise.
	// Error appends its message to this one's.
	FallbackFailure *Failure
	// FallbackSkipped names the fallback tool that was not called because it
	// is already being tried for this request: it is on the call's fallback
	// path, so calling it would go round a cycle (a falls back to b, b to a).
	// Error says so. "" otherwise.
	FallbackSkipped string
}

// Unwrap returns Cause.
func (f *Failure) Unwrap() error { return f.Cause }

// Error returns the message the model sees: what happened to the tool, then,
// when a fallback was tried and failed too, what happened to it.
func (f *Failure) Error() string {
	msg := f.message()
	if ff := f.FallbackFailure; ff != nil {
		name := ff.Tool
		if name == "" {
			name = "the fallback tool"
		}
		msg += " The fallback tool " + name + " was tried instead and failed too: " + ff.Error()
	}
	if f.FallbackSkipped != "" {
		msg += " Its fallback tool " + f.FallbackSkipped + " was not called: it is already being tried for this request (the tools fall back to each other in a cycle)."
	}
	return msg
}

func (f *Failure) message() string {
	var b strings.Builder
	tool := f.Tool
	if tool == "" {
		tool = "the tool"
	}
	switch f.Kind {
	case KindToolError:
		return f.reason()
	case KindArgsInvalid:
		fmt.Fprintf(&b, "%s was not called: the input is invalid", tool)
		if f.Detail != "" {
			fmt.Fprintf(&b, ": %s", f.Detail)
		}
		b.WriteString(". Fix the input and call it again.")
		return b.String()
	case KindApprovalDenied:
		return fmt.Sprintf("The user denied approval for %s. Do not call it again for this request.", tool)
	case KindApprovalRequired:
		return fmt.Sprintf("%s is waiting for a human's approval.", tool)
	case KindCanceled:
		return fmt.Sprintf("The call to %s was canceled.", tool)
	case KindPanic:
		fmt.Fprintf(&b, "%s failed internally (a bug in the tool, not in your input).", tool)
		f.writeSideEffect(&b)
		b.WriteString(" Do not call it again for this request; go on without it.")
		return b.String()
	case KindCircuitOpen:
		f.writeNotCalled(&b, tool)
		if f.Detail != "" {
			fmt.Fprintf(&b, "its dependency %s is down", f.Detail)
		} else {
			b.WriteString("its dependency is down")
		}
		if f.Wait > 0 {
			fmt.Fprintf(&b, " for about %s more", forModel(f.Wait))
		}
		b.WriteString(".")
		f.writeSideEffect(&b)
		b.WriteString(" Go on without it, or try again later.")
		return b.String()
	case KindBusy:
		f.writeNotCalled(&b, tool)
		if f.Detail != "" {
			fmt.Fprintf(&b, "too many calls to its dependency %s are in flight.", f.Detail)
		} else {
			b.WriteString("too many calls to it are in flight.")
		}
		f.writeSideEffect(&b)
		b.WriteString(" Try again shortly, or go on without it.")
		return b.String()
	case KindBudget:
		fmt.Fprintf(&b, "%s failed", tool)
		f.writeAttempts(&b)
		b.WriteString(" and was not retried again: its service is failing for many callers, so retries are being held back.")
		f.writeSideEffect(&b)
		b.WriteString(" Go on without it, or try again later.")
		return b.String()
	case KindTimeout:
		if f.Detail != "" {
			// The time ran out before the attempt began: nothing to answer.
			f.writeNotCalled(&b, tool)
			b.WriteString("its time")
			if f.Timeout > 0 {
				fmt.Fprintf(&b, " (%s)", roundForModel(f.Timeout))
			}
			fmt.Fprintf(&b, " ran out while it was %s.", f.Detail)
			f.writeSideEffect(&b)
			if f.Detail == detailAwaitingApproval {
				fmt.Fprintf(&b, " Tell the user it needs their approval; call %s again once they have given it.", tool)
			} else {
				f.writeNext(&b, tool)
			}
			return b.String()
		}
		fmt.Fprintf(&b, "%s did not answer", tool)
		if f.Timeout > 0 {
			fmt.Fprintf(&b, " within %s", forModel(f.Timeout))
		}
		f.writeAttempts(&b)
		b.WriteString(".")
		f.writeSideEffect(&b)
		f.writeNext(&b, tool)
		return b.String()
	}
	// KindFailed and anything unknown.
	fmt.Fprintf(&b, "%s failed", tool)
	if r := f.reason(); r != "" {
		fmt.Fprintf(&b, " (%s)", r)
	}
	f.writeAttempts(&b)
	b.WriteString(".")
	f.writeSideEffect(&b)
	if f.Wait > 0 {
		fmt.Fprintf(&b, " The service asked to wait %s before trying again, longer than this call may take. Wait at least %s before calling %s again, or go on without it.",
			forModel(f.Wait), forModel(f.Wait), tool)
		return b.String()
	}
	f.writeNext(&b, tool)
	return b.String()
}

// detailAwaitingApproval is the Detail of a tool-timeout whose time ran out
// while the approval gate was still waiting for the approver.
const detailAwaitingApproval = "still waiting for approval"

// writeNotCalled starts the message of a call refused before an attempt:
// "X was not called: " for the first, "X failed after 2 attempts and was not
// tried again: " when earlier attempts failed.
func (f *Failure) writeNotCalled(b *strings.Builder, tool string) {
	if f.Attempts < 1 {
		fmt.Fprintf(b, "%s was not called: ", tool)
		return
	}
	fmt.Fprintf(b, "%s failed", tool)
	f.writeAttempts(b)
	b.WriteString(" and was not tried again: ")
}

func (f *Failure) writeAttempts(b *strings.Builder) {
	switch {
	case f.Attempts == 1:
		fmt.Fprintf(b, " after 1 attempt")
	case f.Attempts > 1:
		fmt.Fprintf(b, " after %d attempts", f.Attempts)
	}
	if f.Attempts > 1 && roundForModel(f.Elapsed) > 0 {
		fmt.Fprintf(b, " over %s", forModel(f.Elapsed))
	}
}

func (f *Failure) writeSideEffect(b *strings.Builder) {
	if f.SideEffect == SideEffectUnknown {
		b.WriteString(" The action may have been applied; check before calling again.")
	}
}

func (f *Failure) writeNext(b *strings.Builder, tool string) {
	if f.Retryable {
		fmt.Fprintf(b, " It may work if %s is called again later.", tool)
		return
	}
	if f.Attempts > 1 {
		fmt.Fprintf(b, " These retries were automatic: do not call %s again with the same input for this request; tell the user it is unavailable or use another tool.", tool)
		return
	}
	fmt.Fprintf(b, " Do not call %s again with the same input for this request; tell the user it is unavailable or use another tool.", tool)
}

// reason is the model-safe short reason of the failure: Detail if set, else
// derived from Cause.
func (f *Failure) reason() string {
	if f.Detail != "" {
		return f.Detail
	}
	return Reason(f.Cause)
}

// Reason returns a short, model-safe description of err derived from its
// type only: a ToolError's own message, "HTTP 503 Service Unavailable", "the
// connection was reset", and so on; "" when the type says nothing useful. It
// never contains the text of a foreign error.
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
		return te.msg
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
		return te.msg
	}
	return ""
}

// forModel says d as a person would: "750ms", "2.5s", "45s", "3m20s",
// "2h15m", "3 days"; "under 1ms" for less.
func forModel(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "under 1ms"
	case d >= 48*time.Hour:
		days := d / (24 * time.Hour)
		if d%(24*time.Hour) >= 12*time.Hour {
			days++
		}
		return fmt.Sprintf("%d days", days)
	case d >= time.Hour:
		d = d.Round(time.Minute)
		h, m := d/time.Hour, (d%time.Hour)/time.Minute
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	return roundForModel(d).String()
}

// roundForModel rounds d to what a person would say: whole seconds from 10s,
// tenths of seconds below, milliseconds under a second.
func roundForModel(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
