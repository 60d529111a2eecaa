package middleware

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
)

// Failure is how a call failed. Its Error method is the model-facing
// message: short, built from the fields below and never from the text of a
// foreign error. Surface builds it, once per call, from the error the layers
// returned and the facts they recorded on the call; Result.Failure holds it.
type Failure struct {
	// Kind is the class of failure (see Classify for the table).
	Kind Kind
	// Tool is the name of the tool that failed.
	Tool string
	// Attempts is how many attempts were made; 0 when none was (args-invalid,
	// circuit-open before the first attempt).
	Attempts int
	// Elapsed is the time the whole call took, delays included.
	Elapsed time.Duration
	// Retryable reports whether calling again with the same input may
	// succeed. After toolsafe's retries ran out it is false: the model should
	// not repeat the identical call.
	Retryable bool
	// SideEffect says whether the action may have been applied.
	SideEffect SideEffect
	// Cause is the error behind the failure. Its text is for logs only.
	Cause error
	// Wait is, for tool-failed, how long the upstream asked to wait before
	// the next try (Retry-After) when that wait did not fit in the call's
	// time, and for circuit-open the time left before the breaker lets a
	// probe through; 0 if none.
	Wait time.Duration
	// Timeout is the limit that expired, for KindTimeout: the attempt timeout
	// or the call's deadline; 0 if unknown.
	Timeout time.Duration
	// Dependency names the dependency whose guard refused the call
	// (circuit-open, tool-busy) or whose free slot the call was waiting for
	// when its time ran out; "" if none.
	Dependency string
	// WaitingFor is, for a tool-timeout whose time ran out before the
	// attempt began, what the call was still waiting for: "approval" or "a
	// free slot"; then the tool was not called. "" otherwise.
	WaitingFor string
	// FallbackFailure is how the fallback tool failed, when the call was
	// routed to one (see package fallback) and it failed too; nil otherwise.
	// Error appends its message to this one's.
	FallbackFailure *Failure
	// FallbackSkipped names the fallback tool that was not called because it
	// is already being tried for this request: it is on the call's fallback
	// path, so calling it would go round a cycle (a falls back to b, b to a).
	// Error says so. "" otherwise.
	FallbackSkipped string
	// Changed is, when a person changed the call's arguments before
	// approving it, the sentence that tells the model so (which fields, and
	// their new values), and Error begins with it: the model must not take
	// the failure for one of its own arguments, nor call again with them
	// blindly. "" otherwise. It quotes arguments, so
	// MessageWithoutArguments leaves it out.
	Changed string
}

// What a call waited for, in Failure.WaitingFor.
const (
	waitingForApproval = "approval"
	waitingForSlot     = "a free slot"
)

// Unwrap returns Cause.
func (f *Failure) Unwrap() error { return f.Cause }

// Is reports whether target is the sentinel of f's Kind (ErrTimeout for
// tool-timeout, ...), so that errors.Is(err, ErrTimeout) finds a failure
// of that kind at any depth.
func (f *Failure) Is(target error) bool {
	ke, ok := target.(*kindError)
	return ok && ke.kind == f.Kind
}

// Error returns the message the model sees: what happened to the tool, then,
// when a fallback was tried and failed too, what happened to it.
func (f *Failure) Error() string { return f.text(true) }

// MessageWithoutArguments is Error with every argument problem (of an
// args-invalid failure, or of the fallback's) withheld: the text for a span
// or a log line that must not quote the tool's input.
func (f *Failure) MessageWithoutArguments() string { return f.text(false) }

func (f *Failure) text(args bool) string {
	msg := f.message(args)
	if args && f.Changed != "" {
		msg = f.Changed + " " + msg
	}
	if ff := f.FallbackFailure; ff != nil {
		name := ff.Tool
		if name == "" {
			name = "the fallback tool"
		}
		msg += " The fallback tool " + name + " was tried instead and failed too: " + ff.text(args)
	}
	if f.FallbackSkipped != "" {
		msg += " Its fallback tool " + f.FallbackSkipped + " was not called: it is already being tried for this request (the tools fall back to each other in a cycle)."
	}
	return msg
}

func (f *Failure) message(args bool) string {
	var b strings.Builder
	tool := f.Tool
	if tool == "" {
		tool = "the tool"
	}
	switch f.Kind {
	case KindToolError:
		return f.toolErrorMessage(tool, args)
	case KindArgsInvalid:
		return f.argsMessage(tool, args)
	case KindApprovalDenied:
		if why, next := f.words(KindApprovalDenied, tool); why != "" {
			return why + next
		}
		return fmt.Sprintf("The user denied approval for %s. Do not call it again for this request.", tool)
	case KindCallLimit:
		if why, next := f.words(KindCallLimit, tool); why != "" {
			return why + next
		}
		fmt.Fprintf(&b, "%s was not called: this request already made the calls allowed. Do not call it again; answer the user with what you have.", tool)
		return b.String()
	case KindApprovalRequired:
		return fmt.Sprintf("%s is waiting for a human's approval.", tool)
	case KindCanceled:
		fmt.Fprintf(&b, "The call to %s was canceled.", tool)
		f.writeSideEffect(&b)
		return b.String()
	case KindPanic:
		fmt.Fprintf(&b, "%s failed internally (a bug in the tool, not in your input).", tool)
		f.writeSideEffect(&b)
		b.WriteString(" Do not call it again for this request; go on without it.")
		return b.String()
	case KindCircuitOpen:
		f.writeNotCalled(&b, tool)
		if f.Dependency != "" {
			fmt.Fprintf(&b, "its dependency %s is down", f.Dependency)
		} else {
			b.WriteString("its dependency is down")
		}
		if f.Wait > 0 {
			fmt.Fprintf(&b, " for %s more", approximately(f.Wait))
		}
		b.WriteString(".")
		f.writeSideEffect(&b)
		b.WriteString(" Go on without it, or try again later.")
		return b.String()
	case KindBusy:
		return f.busyMessage(tool)
	case KindBudget:
		fmt.Fprintf(&b, "%s failed", tool)
		f.writeAttempts(&b)
		b.WriteString(" and was not retried again: its service is failing for many callers, so retries are being held back.")
		f.writeSideEffect(&b)
		b.WriteString(" Go on without it, or try again later.")
		return b.String()
	case KindTimeout:
		return f.timeoutMessage(tool)
	}
	// KindFailed and anything unknown.
	if why, next := f.words(KindFailed, tool); why != "" {
		return why + next
	}
	fmt.Fprintf(&b, "%s failed", tool)
	if r := f.reason(); r != "" {
		fmt.Fprintf(&b, " (%s)", r)
	}
	f.writeAttempts(&b)
	b.WriteString(".")
	f.writeSideEffect(&b)
	if f.Wait > 0 {
		fmt.Fprintf(&b, " The service asked to wait %s before trying again, longer than this call may take. Wait at least %s before calling %s again, or go on without it.",
			forModel(f.Wait), forModel(max(f.Wait, time.Millisecond)), tool)
		return b.String()
	}
	f.writeNext(&b, tool)
	return b.String()
}

// words is what the error behind f that reports kind (one of toolsafe's
// own layers', see reporter) says to the model of a call of tool: the
// words of the first such error in Cause's tree whose row of Classify's
// table ranks first; "" when none has words.
func (f *Failure) words(kind Kind, tool string) (why, next string) {
	var best uint16
	eachReporter(f.Cause, func(r reporter) bool {
		k, retryable := r.Report()
		if k != kind {
			return true
		}
		if row := reportedRow(k, retryable); best == 0 || row < best {
			if w, n := r.Words(tool); w != "" {
				why, next, best = w, n, row
			}
		}
		return true
	})
	return why, next
}

// busyMessage is the message of a tool-busy refusal.
func (f *Failure) busyMessage(tool string) string {
	var b strings.Builder
	f.writeNotCalled(&b, tool)
	why, next := f.words(KindBusy, tool)
	switch {
	case why != "" && next != "":
		b.WriteString(why + next)
		return b.String()
	case why != "":
		b.WriteString(why)
	case errors.Is(f.Cause, ratelimiter.ErrExceeded):
		b.WriteString("it was called too often (a rate limit).")
		f.writeSideEffect(&b)
		b.WriteString(" Wait before calling it again, or go on without it.")
		return b.String()
	case errors.Is(f.Cause, adaptivethrottler.ErrExceeded):
		b.WriteString("its service is failing for many callers, so calls are being held back.")
	case f.Dependency != "":
		fmt.Fprintf(&b, "too many calls to its dependency %s are in flight.", f.Dependency)
	default:
		b.WriteString("too many calls to it are in flight.")
	}
	f.writeSideEffect(&b)
	b.WriteString(" Try again shortly, or go on without it.")
	return b.String()
}

// toolErrorMessage is the message of a tool-error: the ToolError's own
// text, advice for an HTTP status that is the input's fault, or, without
// args, an upstream's text withheld.
func (f *Failure) toolErrorMessage(tool string, args bool) string {
	var te *ToolError
	if errors.As(f.Cause, &te) && !hasMarker(f.Cause) {
		switch {
		case te.status != 0:
			return httpAdvice(tool, te.status)
		case te.upstream && args:
			return te.msg
		case te.upstream:
			return tool + " answered with an error: " + te.safeText() + "."
		}
	}
	return f.reason()
}

// argsMessage is the message of an args-invalid failure: what is wrong
// with the input, withheld without args (the problems quote the input).
func (f *Failure) argsMessage(tool string, args bool) string {
	var b strings.Builder
	if f.Attempts > 0 {
		fmt.Fprintf(&b, "%s did not accept the input", tool) // the tool itself found it wrong
	} else {
		fmt.Fprintf(&b, "%s was not called: the input is invalid", tool)
	}
	var ae *ArgsError
	switch {
	case !errors.As(f.Cause, &ae) || len(ae.Problems) == 0:
	case args:
		fmt.Fprintf(&b, ": %s", ae.Error())
	default:
		b.WriteString(": details withheld: they quote the arguments")
	}
	b.WriteString(". Fix the input and call it again.")
	return b.String()
}

// timeoutMessage is the message of a tool-timeout.
func (f *Failure) timeoutMessage(tool string) string {
	var b strings.Builder
	if f.WaitingFor != "" || f.Attempts < 1 {
		// The time ran out before the attempt began: nothing to answer.
		f.writeNotCalled(&b, tool)
		b.WriteString("its time")
		if f.Timeout > 0 {
			fmt.Fprintf(&b, " (%s)", forModel(f.Timeout))
		}
		switch {
		case f.WaitingFor == "":
			b.WriteString(" ran out before its first attempt could begin.")
		case f.WaitingFor == waitingForSlot && f.Dependency != "":
			fmt.Fprintf(&b, " ran out while it was waiting for a free slot at its dependency %s.", f.Dependency)
		case f.WaitingFor == waitingForSlot:
			b.WriteString(" ran out while it was waiting for a free slot.")
		default:
			b.WriteString(" ran out while it was still waiting for approval.")
		}
		f.writeSideEffect(&b)
		if f.WaitingFor == waitingForApproval {
			fmt.Fprintf(&b, " Tell the user it needs their approval; call %s again once they have given it.", tool)
		} else {
			f.writeNext(&b, tool)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s did not answer", tool)
	switch {
	case f.Timeout >= time.Millisecond:
		fmt.Fprintf(&b, " within %s", forModel(f.Timeout))
	case f.Timeout > 0:
		fmt.Fprintf(&b, " within its time (%s)", forModel(f.Timeout))
	}
	f.writeAttempts(&b)
	b.WriteString(".")
	f.writeSideEffect(&b)
	f.writeNext(&b, tool)
	return b.String()
}

// writeNotCalled starts the message of a call refused before an attempt:
// "X was not called: " for the first, "X failed after 2 attempts, and the
// next attempt was not made: " when earlier attempts failed (a retry that
// was refused, maybe after its wait).
func (f *Failure) writeNotCalled(b *strings.Builder, tool string) {
	if f.Attempts < 1 {
		fmt.Fprintf(b, "%s was not called: ", tool)
		return
	}
	fmt.Fprintf(b, "%s failed", tool)
	f.writeAttempts(b)
	b.WriteString(", and the next attempt was not made: ")
}

func (f *Failure) writeAttempts(b *strings.Builder) {
	switch {
	case f.Attempts == 1:
		fmt.Fprintf(b, " after 1 attempt")
	case f.Attempts > 1:
		fmt.Fprintf(b, " after %d attempts", f.Attempts)
	}
	if d := roundForModel(f.Elapsed); f.Attempts > 1 && d > 0 {
		fmt.Fprintf(b, " over %s", forModel(d)) // 0.6ms is "1ms", never "under 1ms"
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

// reason is the model-safe short reason of the failure, derived from Cause.
func (f *Failure) reason() string { return Reason(f.Cause) }

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

// approximately is forModel(d) after "about", or "under 1ms".
func approximately(d time.Duration) string {
	if d < time.Millisecond {
		return forModel(d)
	}
	return "about " + forModel(d)
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

// httpAdvice is the model's message for a tool whose service answered an
// HTTP status that is the input's fault, or the caller's: which status, and
// what to do about it.
func httpAdvice(tool string, code int) string {
	head := fmt.Sprintf("%s failed: the service answered %d %s", tool, code, httpStatusText(code))
	switch code {
	case 400, 422:
		return head + ", so it refused the input as invalid. Fix the input before calling " + tool + " again."
	case 401, 403, 407:
		return head + ", so it refused access. Do not call " + tool + " again for this request; tell the user it is not allowed."
	case 404, 410:
		return head + ", so what the input names was not found. Check the input before calling " + tool + " again, or tell the user."
	case 409:
		return head + ", so the request conflicts with the current state. Check the current state before calling " + tool + " again."
	case 413, 414, 431:
		return head + ", so the request is too large. Send less before calling " + tool + " again."
	}
	return head + ". Do not call " + tool + " again with the same input for this request; change the input or tell the user."
}
