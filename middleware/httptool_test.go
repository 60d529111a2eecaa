package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestDoHTTP(t *testing.T) {
	const secret = "OPS-77 db password hunter2"
	exact := strings.Repeat("x", middleware.MaxHTTPBody)
	for _, tt := range []struct {
		name      string
		step      toolsafetest.Step
		body      string // the answer wanted when there is no error
		kind      middleware.Kind
		retryable bool
		check     func(t *testing.T, err error)
	}{
		{name: "a 2xx answer is its body", step: toolsafetest.Respond(200, `{"number":"INV-1001","status":"paid"}`),
			body: `{"number":"INV-1001","status":"paid"}`},
		{name: "a body of exactly maxHTTPBody bytes is read whole", step: toolsafetest.Respond(200, exact), body: exact},
		{name: "a 429 with Retry-After is retried after at least its wait", step: toolsafetest.TooMany("7"),
			kind: middleware.KindFailed, retryable: true, check: func(t *testing.T, err error) {
				if d, ok := middleware.RetryAfterOf(err); !ok || d != 7*time.Second {
					t.Errorf("RetryAfterOf = %v, %v; want 7s, true", d, ok)
				}
			}},
		{name: "a 404 is a tool error that keeps the body for logs only", step: toolsafetest.Respond(404, secret),
			kind: middleware.KindToolError, check: func(t *testing.T, err error) {
				var he *middleware.HTTPError
				if !errors.As(err, &he) || he.StatusCode != 404 || he.Body != secret {
					t.Errorf("%v; want an *HTTPError 404 with the body", err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the model would see the body: %q", err.Error())
				}
			}},
		{name: "a body longer than maxHTTPBody is refused, not truncated", step: toolsafetest.Respond(200, exact+secret),
			kind: middleware.KindFailed, check: func(t *testing.T, err error) {
				var mbe *http.MaxBytesError
				if !errors.As(err, &mbe) || mbe.Limit != middleware.MaxHTTPBody {
					t.Errorf("%v; want an *http.MaxBytesError with Limit %d", err, middleware.MaxHTTPBody)
				}
				if strings.Contains(err.Error(), "xxx") || strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error quotes the body: %.200q", err.Error())
				}
			}},
		{name: "a reset connection is returned as it is, and retried", step: toolsafetest.Reset(),
			kind: middleware.KindFailed, retryable: true, check: func(t *testing.T, err error) {
				if !errors.Is(err, syscall.ECONNRESET) {
					t.Errorf("%v; want ECONNRESET", err)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := toolsafetest.NewUpstream(nil)
			defer up.Close()
			up.Enqueue("/invoices", tt.step)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, up.URL()+"/invoices", nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := middleware.DoHTTP(toolsafetest.NoKeepAliveClient(), req)
			kind, retryable := middleware.Classify(err)
			if kind != tt.kind || retryable != tt.retryable {
				t.Fatalf("%v (%v, retryable %v); want %q, retryable %v", err, kind, retryable, tt.kind, tt.retryable)
			}
			if body != tt.body {
				t.Errorf("body of %d bytes %.60q; want %d bytes %.60q", len(body), body, len(tt.body), tt.body)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
			if n := up.Requests("/invoices"); n != 1 {
				t.Errorf("the upstream got %d requests; want 1", n)
			}
		})
	}
}

// An error answer's unread body is drained and closed, so the keep-alive
// connection carries the next request.
func TestDoHTTPLeavesTheConnectionReusable(t *testing.T) {
	up := toolsafetest.NewUpstream(nil)
	defer up.Close()
	up.Enqueue("/invoices", toolsafetest.Respond(404, strings.Repeat("x", 32<<10)), toolsafetest.Respond(200, "ok"))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var reused []bool
	for range 2 {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) },
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, up.URL()+"/invoices", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = middleware.DoHTTP(client, req)
	}
	if len(reused) != 2 || !reused[1] {
		t.Errorf("connections reused: %v; want the second request on the first's connection", reused)
	}
}
