package tracetext_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/examples/internal/tracetext"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// busyTwice fails twice with a transient error, then answers; it is
// retried and traced.
func busyTwice(tracing toolsafe.Option) *toolsafe.Tool {
	calls := 0
	return toolsafe.Wrap(middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		calls++
		if calls <= 2 {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return "paid", nil
	}), toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
		Base: time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}), tracing)
}

func run(t *testing.T, tr *tracetext.Tracing) {
	t.Helper()
	tool := busyTwice(toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tr.TracerProvider()))))
	ctx, end := tr.StartAgent(context.Background(), "billing")
	if r := tool.Run(ctx, "INV-1001"); r.Status() != "ok" {
		t.Fatalf("status %q", r.Status())
	}
	end()
}

var durations = regexp.MustCompile(`  [0-9.]+(µs|ms|s|ns)`)

func TestWithoutAnEndpointTheTreeIsPrinted(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := tracetext.Setup(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Exporting() {
		t.Fatal("exporting with no endpoint set")
	}
	run(t, tr)
	var out strings.Builder
	if err := tr.Finish(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := durations.ReplaceAllString(out.String(), "  D")
	want := `invoke_agent billing  D
  execute_tool fetch_invoice  D  ok after 3 attempts
    attempt 1  D  tool-failed
    · retry after attempt 1, delay 1ms (tool-failed)
    attempt 2  D  tool-failed
    · retry after attempt 2, delay 2ms (tool-failed)
    attempt 3  D
`
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

func TestWithAnEndpointSpansAreExportedOverOTLPHTTP(t *testing.T) {
	var requests, bytes atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		bytes.Add(n)
		requests.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")

	tr, err := tracetext.Setup(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Exporting() {
		t.Fatal("not exporting with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	run(t, tr)
	var out strings.Builder
	if err := tr.Finish(context.Background(), &out); err != nil {
		t.Fatalf("finish: %v\n%s", err, out.String())
	}
	if requests.Load() == 0 || bytes.Load() == 0 {
		t.Errorf("the collector got %d requests, %d bytes", requests.Load(), bytes.Load())
	}
	if !strings.Contains(out.String(), "5 spans exported over OTLP/HTTP to "+collector.URL) {
		t.Errorf("output %q", out.String())
	}
}
