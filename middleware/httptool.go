package middleware

import (
	"fmt"
	"io"
	"net/http"
)

// maxHTTPBody is the most DoHTTP reads of a 2xx answer's body, in bytes:
// 1 MiB. A longer body is an error, never a truncated answer.
const maxHTTPBody = 1 << 20

// maxDrain is how much DoHTTP reads and discards of what is left of a body
// before closing it, so a keep-alive connection can carry the next request;
// past it the connection is closed instead.
const maxDrain = 64 << 10

// DoHTTP sends req with client (nil: http.DefaultClient) and returns the body
// of a 2xx answer, at most maxHTTPBody bytes; a longer one is Permanent
// (tool-failed, not retried) and wraps an *http.MaxBytesError. A network or
// read error is returned as it is (transient); a non-2xx answer gives
// FromHTTPResponse's error. The body is always drained (64 KiB at most) and closed.
func DoHTTP(client *http.Client, req *http.Request) (string, error) {
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		_ = resp.Body.Close()
	}()
	if err := FromHTTPResponse(resp); err != nil {
		return "", err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return "", err
	}
	if len(body) > maxHTTPBody {
		return "", Permanent(fmt.Errorf("toolsafe: the HTTP response body is longer than %d bytes (%w)",
			maxHTTPBody, &http.MaxBytesError{Limit: maxHTTPBody}))
	}
	return string(body), nil
}
