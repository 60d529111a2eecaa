package middleware_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// A tool that reads an HTTP API turns every answer that is not a success
// into an error toolsafe can act on: a 429 with Retry-After is retried after
// at least the wait it asks for, a 404 goes to the model at once with what
// to do about it. A lost connection is marked Transient by the tool.
func ExampleFromHTTPResponse() {
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("number") != "INV-1001" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"number":"INV-1001","status":"paid"}`)
	}))
	defer up.Close()
	up.Enqueue("/invoices", toolsafetest.TooMany("1")) // the first request gets 429, Retry-After: 1
	client := toolsafetest.NoKeepAliveClient()

	fetch := toolsafe.Wrap(middleware.Func("fetch_invoice", "Reads an invoice by number.", func(ctx context.Context, number string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, up.URL()+"/invoices?number="+url.QueryEscape(number), nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", middleware.Transient(err)
		}
		defer resp.Body.Close()
		if err := middleware.FromHTTPResponse(resp); err != nil {
			return "", err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", middleware.Transient(err)
		}
		return string(body), nil
	}), toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{Base: 10 * time.Millisecond}}))

	r := fetch.Run(context.Background(), "INV-1001")
	fmt.Println(r.Status(), "after", r.Attempts, "attempts; waited at least Retry-After:", r.Delays[0] >= time.Second)
	fmt.Println(r.Observation())

	r = fetch.Run(context.Background(), "INV-9999")
	fmt.Println(r.Kind(), "after", r.Attempts, "attempt")
	fmt.Println(r.Observation())
	fmt.Println("requests:", up.Requests("/invoices"))
	// Output:
	// ok after 2 attempts; waited at least Retry-After: true
	// {"number":"INV-1001","status":"paid"}
	// tool-error after 1 attempt
	// fetch_invoice failed: the service answered 404 Not Found, so what the input names was not found. Check the input before calling fetch_invoice again, or tell the user.
	// requests: 3
}

// DoHTTP is the whole body of a tool that reads an HTTP API: it sends the
// request, classifies an answer that is not 2xx and reads the body. The
// model sees the invoice, or what to do about a 404, never the upstream's
// error text.
func ExampleDoHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("number") != "INV-1001" {
			http.Error(w, "no row in shard db-7", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, `{"number":"INV-1001","status":"paid"}`)
	}))
	defer srv.Close()
	client := toolsafetest.NoKeepAliveClient()

	fetch := toolsafe.Wrap(middleware.Func("fetch_invoice", "Reads an invoice by number.", func(ctx context.Context, number string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/invoices?number="+url.QueryEscape(number), nil)
		if err != nil {
			return "", err
		}
		return middleware.DoHTTP(client, req)
	}))

	fmt.Println(fetch.Run(context.Background(), "INV-1001").Observation())
	r := fetch.Run(context.Background(), "INV-9999")
	fmt.Println(r.Kind()+":", r.Observation())
	// Output:
	// {"number":"INV-1001","status":"paid"}
	// tool-error: fetch_invoice failed: the service answered 404 Not Found, so what the input names was not found. Check the input before calling fetch_invoice again, or tell the user.
}
