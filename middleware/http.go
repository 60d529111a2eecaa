package middleware

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTPError is an HTTP answer that was not 2xx. Its Error text includes the
// start of the body, for logs; the model only ever sees the status code.
type HTTPError struct {
	// StatusCode is the HTTP status code, e.g. 503.
	StatusCode int
	// Body is the start of the response body (at most 1 KiB). It is kept for
	// DEBUG logs and never reaches the model or a span.
	Body string
}

// Error returns the status and the start of the body.
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, httpStatusText(e.StatusCode))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

func httpStatusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "status"
}

// maxBody is how much of an error response's body FromHTTPResponse keeps.
const maxBody = 1 << 10

// FromHTTPResponse classifies an HTTP response for a tool. It returns nil for
// 2xx. Otherwise it returns an error wrapping an *HTTPError:
//
//   - 429 Too Many Requests and 503 Service Unavailable with a Retry-After
//     header: RetryAfter with the header's wait (RFC 9110 §10.2.3: delay
//     seconds or an HTTP-date; a date in the past asks for no wait);
//   - 408, 425, 429, 500, 502, 503 and 504: Transient, so retried;
//   - any other status: a ToolError (tool-error, not retried); the model's
//     message names the tool, the status and what to do, such as
//     "fetch_invoice failed: the service answered 404 Not Found, so what
//     the input names was not found. Check the input before calling
//     fetch_invoice again, or tell the user."
//
// It reads at most 1 KiB of the body of a non-2xx answer into
// HTTPError.Body, for logs; the caller still closes resp.Body. A nil resp is
// a transient error.
func FromHTTPResponse(resp *http.Response) error {
	if resp == nil {
		return Transient(fmt.Errorf("toolsafe: no HTTP response"))
	}
	code := resp.StatusCode
	if code >= 200 && code <= 299 {
		return nil
	}
	he := &HTTPError{StatusCode: code}
	if resp.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		he.Body = string(b)
	}
	switch code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return RetryAfter(he, d)
		}
		return Transient(he)
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusGatewayTimeout:
		return Transient(he)
	}
	te := NewToolError("the service answered %d %s", code, httpStatusText(code)).WithCause(he)
	te.status = code
	return te
}

// parseRetryAfter parses the value of a Retry-After header (RFC 9110
// §10.2.3): either delay-seconds, a non-negative decimal integer, or an
// HTTP-date in any of the three forms http.ParseTime accepts. It returns the
// wait counted from now, and false when the value is empty or malformed. A
// date in the past gives 0 and true. Values beyond about 290 years are capped
// at the largest time.Duration.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && allDigits(v) {
				return time.Duration(1<<63 - 1), true
			}
			return 0, false
		}
		const maxSecs = uint64((1<<63 - 1) / int64(time.Second))
		if secs > maxSecs {
			return time.Duration(1<<63 - 1), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
