package middleware_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

// FuzzParseRetryAfter: any header value gives a wait that is never negative,
// and delay-seconds round-trip.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", " 7 ", "-1", "1.5", "", "Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "99999999999999999999", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := middleware.ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("parseRetryAfter(%q) = %v: negative", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %v, false: a rejected value must give 0", v, d)
		}
	})
}

// FuzzFromHTTPResponse: any status, header and body classify without panic,
// 2xx is never an error, and the body never reaches the model's message.
func FuzzFromHTTPResponse(f *testing.F) {
	f.Add(503, "2", "upstream secret body")
	f.Add(429, "Sun, 06 Nov 1994 08:49:37 GMT", "rate limited: key sk-live-123")
	f.Add(404, "", "no such row in table invoices")
	f.Add(200, "", "ok")
	f.Add(302, "", "")
	f.Add(-1, "x", "\x00\xff")
	f.Fuzz(func(t *testing.T, code int, retryAfter, body string) {
		resp := &http.Response{StatusCode: code, Header: http.Header{"Retry-After": {retryAfter}},
			Body: io.NopCloser(strings.NewReader(body))}
		err := middleware.FromHTTPResponse(resp)
		if code >= 200 && code <= 299 {
			if err != nil {
				t.Fatalf("%d gave %v", code, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%d gave no error", code)
		}
		kind, _ := middleware.Classify(err)
		msg := (&middleware.Failure{Kind: kind, Tool: "t", Attempts: 2, Cause: err}).Error()
		if len(body) >= 4 && strings.Contains(msg, body) {
			t.Fatalf("the body %q reached the model: %q", body, msg)
		}
	})
}

// FuzzFailureMessage: the model's message does not depend on a foreign
// error's text at all, however it is wrapped: built with the fuzzed text or
// with "x" in its place, the messages are identical.
func FuzzFailureMessage(f *testing.F) {
	f.Add("connection reset by peer: token=sk-live-abc", uint8(0), uint8(0))
	f.Add("pq: password authentication failed for user \"billing\"", uint8(1), uint8(3))
	f.Add("dial tcp 10.0.0.7:5432: i/o timeout", uint8(2), uint8(5))
	f.Fuzz(func(t *testing.T, text string, wrapping, kindIndex uint8) {
		wrap := func(text string) error {
			var err error = errors.New(text)
			switch wrapping % 4 {
			case 1:
				err = fmt.Errorf("fetch: %w", middleware.Transient(err))
			case 2:
				err = errors.Join(middleware.RetryAfter(err, time.Second), syscall.ECONNRESET)
			case 3:
				err = middleware.NewToolError("the service answered 500").WithCause(err)
			}
			return err
		}
		kinds := []middleware.Kind{middleware.KindFailed, middleware.KindTimeout, middleware.KindPanic,
			middleware.KindCircuitOpen, middleware.KindBusy, middleware.KindBudget, middleware.KindApprovalDenied,
			middleware.KindArgsInvalid, middleware.KindCanceled, middleware.KindApprovalRequired, middleware.KindToolError}
		kind := kinds[int(kindIndex)%len(kinds)]
		if kind == middleware.KindToolError && wrapping%4 != 3 {
			return // a tool-error's message is the tool author's, meant for the model
		}
		for _, retryable := range []bool{true, false} {
			message := func(cause error) string {
				return (&middleware.Failure{Kind: kind, Tool: "fetch_invoice", Attempts: 3, Elapsed: time.Second,
					Retryable: retryable, Cause: cause, SideEffect: middleware.SideEffectUnknown}).Error()
			}
			if got, want := message(wrap(text)), message(wrap("x")); got != want {
				t.Fatalf("the foreign text %q changed the model's message:\n%q\n%q", text, got, want)
			}
		}
	})
}
