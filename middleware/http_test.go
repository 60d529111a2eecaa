package middleware_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
)

func response(code int, retryAfter, body string) *http.Response {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func TestFromHTTPResponse(t *testing.T) {
	const secret = "db password is hunter2"
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name      string
		resp      *http.Response
		kind      middleware.Kind
		retryable bool
		wait      time.Duration // lower bound when hasWait
		hasWait   bool
		modelSees string
	}{
		{"200 is no error", response(200, "", "{}"), "", false, 0, false, ""},
		{"204 is no error", response(204, "", ""), "", false, 0, false, ""},
		{"429 with seconds waits that long", response(429, "7", secret), middleware.KindFailed, true, 7 * time.Second, true, ""},
		{"503 with an HTTP-date waits until then", response(503, future, secret), middleware.KindFailed, true, 85 * time.Second, true, ""},
		{"503 without Retry-After is transient", response(503, "", secret), middleware.KindFailed, true, 0, false, ""},
		{"429 with a malformed Retry-After is transient", response(429, "soon", secret), middleware.KindFailed, true, 0, false, ""},
		{"500 is transient", response(500, "", secret), middleware.KindFailed, true, 0, false, ""},
		{"502 is transient", response(502, "", secret), middleware.KindFailed, true, 0, false, ""},
		{"504 is transient", response(504, "", secret), middleware.KindFailed, true, 0, false, ""},
		{"408 is transient", response(408, "", secret), middleware.KindFailed, true, 0, false, ""},
		{"400 is the model's to fix", response(400, "", secret), middleware.KindToolError, false, 0, false, "the service answered 400 Bad Request"},
		{"404 is the model's to fix", response(404, "", secret), middleware.KindToolError, false, 0, false, "the service answered 404 Not Found"},
		{"422 is the model's to fix", response(422, "", secret), middleware.KindToolError, false, 0, false, "the service answered 422 Unprocessable Entity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := middleware.FromHTTPResponse(tt.resp)
			kind, retryable := middleware.Classify(err)
			if kind != tt.kind || retryable != tt.retryable {
				t.Fatalf("kind %q retryable %v; want %q %v (err %v)", kind, retryable, tt.kind, tt.retryable, err)
			}
			if err == nil {
				return
			}
			wait, has := middleware.RetryAfterOf(err)
			if has != tt.hasWait || (has && (wait < tt.wait || wait > tt.wait+10*time.Second)) {
				t.Errorf("wait %v, %v; want about %v, %v", wait, has, tt.wait, tt.hasWait)
			}
			if tt.modelSees != "" && err.Error() != tt.modelSees {
				t.Errorf("model sees %q; want %q", err.Error(), tt.modelSees)
			}
			f := &middleware.Failure{Kind: kind, Tool: "fetch_invoice", Attempts: 1, Cause: err}
			if strings.Contains(f.Error(), "hunter2") {
				t.Errorf("the body reached the model: %q", f.Error())
			}
			var he *middleware.HTTPError
			if !errors.As(err, &he) || he.Body != secret {
				t.Errorf("the body is not kept for logs: %v", err)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true},   // IMF-fixdate
		{"Sunday, 29-Nov-26 12:01:00 GMT", time.Minute, true},       // RFC 850
		{"Sun Nov 29 12:00:10 2026", 10 * time.Second, true},        // asctime
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true},                  // in the past: no wait
		{"99999999999999999999999", time.Duration(1<<63 - 1), true}, // saturates
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"5s", 0, false},
	}
	for _, tt := range tests {
		got, ok := middleware.ParseRetryAfter(tt.value, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.ok)
		}
	}
}
