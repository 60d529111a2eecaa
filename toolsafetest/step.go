package toolsafetest

import (
	"fmt"
	"net/http"
	"time"
)

// action says what the upstream does with one request.
type action int

const (
	pass           action = iota // hand the request to the handler
	reset                        // read the request, then reset the connection
	applyThenReset               // run the handler, drop its answer, reset
	status                       // answer a status code, without the handler
	hang                         // never answer until the client goes or Release
	slow                         // wait, then hand the request to the handler
)

func (a action) String() string {
	switch a {
	case pass:
		return "Pass"
	case reset:
		return "Reset"
	case applyThenReset:
		return "ApplyThenReset"
	case status:
		return "Status"
	case hang:
		return "Hang"
	case slow:
		return "Slow"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Step is the scripted fate of one request to an Upstream: pass it to the
// handler, reset the connection (before or after applying the handler's
// side effect), answer a status such as 429 with a Retry-After header, hang,
// or answer slowly. Make one with Pass, Reset, ApplyThenReset, Respond,
// TooMany, Unavailable, Hang or Slow. The zero Step is Pass. A Step is a
// value: it can be enqueued many times and shared between goroutines.
type Step struct {
	action     action
	code       int           // status: the HTTP status code; 0 means 500
	retryAfter string        // status: the Retry-After header value; "" for none
	body       string        // status: the response body
	delay      time.Duration // slow: the wait before the handler runs
}

// String describes the step, e.g. "Status(429, Retry-After: 2)", "Slow(1s)",
// "Reset".
func (st Step) String() string {
	switch st.action {
	case status:
		if st.retryAfter != "" {
			return fmt.Sprintf("Status(%d, Retry-After: %s)", st.statusCode(), st.retryAfter)
		}
		return fmt.Sprintf("Status(%d)", st.statusCode())
	case slow:
		return fmt.Sprintf("Slow(%v)", st.delay)
	}
	return st.action.String()
}

// statusCode is the HTTP status code a Respond, TooMany or Unavailable step
// answers.
func (st Step) statusCode() int {
	if st.code == 0 {
		return http.StatusInternalServerError
	}
	return st.code
}

// WithRetryAfter returns a copy of a Respond, TooMany or Unavailable step
// that sends the Retry-After header with value, verbatim: delay-seconds such
// as "2", or an HTTP-date. An empty value sends no header. Other steps
// answer no status of their own and ignore it.
func (st Step) WithRetryAfter(value string) Step {
	st.retryAfter = value
	return st
}

// Pass returns the step that hands the request to the upstream's handler:
// the healthy answer, and the zero Step.
func Pass() Step { return Step{action: pass} }

// Reset returns the step that reads the request, body included, then closes
// its TCP connection abruptly with a RST (the connection is hijacked, its
// linger time set to zero, and closed). The handler is not run. Only the
// connection that carried the request is affected.
//
// On Linux a Go client on a fresh connection sees an error for which
// errors.Is(err, syscall.ECONNRESET) is true. On a reused keep-alive
// connection, net/http's Transport silently resends a replayable request
// (GET, HEAD, OPTIONS, TRACE, or any method with an Idempotency-Key or
// X-Idempotency-Key header and a rewindable body), so such a client sees the
// answer to the resend instead, and the upstream counts two requests: use
// NoKeepAliveClient.
func Reset() Step { return Step{action: reset} }

// ApplyThenReset returns the step that runs the handler, so its side effect
// is applied, with a ResponseWriter that discards everything, then resets
// the connection as Reset does: the client never learns the outcome. On a
// reused keep-alive connection net/http may resend a replayable request
// (see Reset), applying the side effect twice.
func ApplyThenReset() Step { return Step{action: applyThenReset} }

// Respond returns the step that answers the HTTP status code with body (as
// text/plain) and no Retry-After header (see WithRetryAfter), without
// running the handler. A code of zero means 500 Internal Server Error; other
// codes must be valid (100-999).
func Respond(code int, body string) Step {
	return Step{action: status, code: code, body: body}
}

// TooMany returns the step that answers 429 Too Many Requests, with the
// body "toolsafetest: too many requests\n" and the Retry-After header set
// verbatim to retryAfter ("2" for two seconds, or an HTTP-date). An empty
// retryAfter sends no header.
func TooMany(retryAfter string) Step {
	return Step{action: status, code: http.StatusTooManyRequests, retryAfter: retryAfter,
		body: "toolsafetest: too many requests\n"}
}

// Unavailable returns the step that answers 503 Service Unavailable, with
// the body "toolsafetest: service unavailable\n" and the Retry-After header
// set verbatim to retryAfter. An empty retryAfter sends no header.
func Unavailable(retryAfter string) Step {
	return Step{action: status, code: http.StatusServiceUnavailable, retryAfter: retryAfter,
		body: "toolsafetest: service unavailable\n"}
}

// Hang returns the step that never answers: the request waits until the
// client goes away (its request context ends) or Release or Close is called,
// and then it is answered 503 Service Unavailable with the body
// "toolsafetest: released\n". The handler is not run.
func Hang() Step { return Step{action: hang} }

// Slow returns the step that waits d, then hands the request to the handler.
// If the client goes away first, the handler is not run; if Release or Close
// is called first, it runs at once. A d of zero or less means no wait: the
// step then behaves as Pass.
func Slow(d time.Duration) Step { return Step{action: slow, delay: d} }

// Chaos gives the probabilities of the random faults Upstream.Chaos injects.
// Each probability is in [0, 1] and their sum must not exceed 1; the rest of
// the probability mass is Pass. The zero Chaos injects no fault.
type Chaos struct {
	// Reset is the probability of a Reset step.
	Reset float64
	// TooMany is the probability of a TooMany(RetryAfter) step.
	TooMany float64
	// Unavailable is the probability of an Unavailable(RetryAfter) step.
	Unavailable float64
	// Hang is the probability of a Hang step.
	Hang float64
	// Slow is the probability of a Slow(SlowDelay) step.
	Slow float64

	// RetryAfter is the Retry-After header value sent with TooMany and
	// Unavailable faults, verbatim. Empty means no header.
	RetryAfter string

	// SlowDelay is the wait of Slow faults. Zero means no wait.
	SlowDelay time.Duration
}

// pick maps x in [0, 1) to a step.
func (c Chaos) pick(x float64) Step {
	if x -= c.Reset; x < 0 {
		return Reset()
	}
	if x -= c.TooMany; x < 0 {
		return TooMany(c.RetryAfter)
	}
	if x -= c.Unavailable; x < 0 {
		return Unavailable(c.RetryAfter)
	}
	if x -= c.Hang; x < 0 {
		return Hang()
	}
	if x -= c.Slow; x < 0 {
		return Slow(c.SlowDelay)
	}
	return Pass()
}
