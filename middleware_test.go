package toolsafe

// The composed stack's contract: the order of the layers, the Call and Run
// contract that langchaingo's executor and programs rely on, and the
// reference scenario the project started from.

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/call"
	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// The layers, outermost first, as the package documentation lists them.
var designedOrder = []string{
	"call span", "surface", "args schema", "run ledger", "loop guard", "with", "fallback", "deadline", "retry", "side effects",
	"approval", "policies", "breaker", "bulkhead", "timeout", "recover",
}

// stage is one layer of the stack: its name, and how a configuration
// builds it (a nil middleware when the layer is off).
type stage struct {
	name  string
	build func(c *config) ([]middleware.Middleware, error)
}

// stack is the table's layers, outermost first, each with its builder.
func stack() []stage {
	b := builders()
	st := make([]stage, 0, len(b))
	for _, name := range layer.Names() {
		st = append(st, stage{name, b[name]})
	}
	return st
}

// Every layer on, whatever the order of the options, runs in the designed
// order: shown by a recorder put in front of each layer, which notes when a
// call enters and leaves it.
func TestLayersRunInTheDesignedOrder(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	opts := []Option{ // deliberately out of order
		WithTimeout(time.Second),
		WithBulkhead(policy.NewBulkhead("billing", 1, 0)),
		WithCircuitBreaker(policy.NewCircuitBreaker("billing", policy.Breaker{})),
		WithPolicies(ratelimiter.NewBursty[string](100, time.Second)),
		WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
			return approval.Approved, nil
		})),
		WithSideEffects(middleware.SideEffectsWithKey),
		WithRetry(policy.Retry{MaxRetries: 1, Backoff: policy.Constant(0)}),
		WithDeadline(time.Minute),
		WithFallback(fallback.To(middleware.Func("alt", "", func(context.Context, string) (string, error) { return "", nil }))),
		With(func(next tools.Tool) tools.Tool { return next }),
		WithArgsSchema([]byte(`{"type":"object"}`)),
		WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))),
	}
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	var mws []middleware.Middleware
	if len(builders()) != len(Layers()) {
		t.Fatalf("%d layers are built, %d listed: every layer of the table has its builder", len(builders()), len(Layers()))
	}
	for _, l := range stack() {
		if l.build == nil {
			t.Fatalf("layer %q has no builder", l.name)
		}
		built, err := l.build(&c)
		if err != nil {
			t.Fatal(err)
		}
		if len(built) != 1 {
			t.Fatalf("layer %q built %d middlewares; the test turns every layer on, once", l.name, len(built))
		}
		name := l.name
		mws = append(mws, func(next tools.Tool) tools.Tool {
			return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
				note("enter " + name)
				defer note("leave " + name)
				return next.Call(ctx, input)
			})
		}, built[0])
	}
	if !slices.Equal(Layers(), designedOrder) {
		t.Errorf("Layers() = %q\nwant %q", Layers(), designedOrder)
	}
	tool := middleware.Func("refund", "", func(context.Context, string) (string, error) { note("tool"); return "ok", nil })
	ctx, call := call.Begin(context.Background(), "refund", "", "{}", nil)
	out, err := middleware.Chain(mws...)(tool).Call(ctx, "{}")
	if r := call.Result(ctx, out, err); r.Status() != "ok" {
		t.Fatalf("status %q (%v); want ok", r.Status(), r.Failure)
	}

	var want []string
	for _, name := range designedOrder {
		want = append(want, "enter "+name)
	}
	want = append(want, "tool")
	for i := len(designedOrder) - 1; i >= 0; i-- {
		want = append(want, "leave "+designedOrder[i])
	}
	if !slices.Equal(seen, want) {
		t.Errorf("the call went\n %v\nwant\n %v", seen, want)
	}
}

// Call follows langchaingo's contract: an answer or a model-facing message
// with a nil error; a pause and the caller's cancellation as errors. Run
// gives the structured outcome of the same call.
func TestCallAndRunContract(t *testing.T) {
	answer := middleware.Func("fetch", "Fetches.", func(_ context.Context, in string) (string, error) { return "got " + in, nil })
	semantic := middleware.Func("fetch", "", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("no invoice INV-9")
	})
	var _ tools.Tool = Wrap(answer) // *Tool is a langchaingo tool

	t.Run("an answer", func(t *testing.T) {
		w := Wrap(answer)
		if out, err := w.Call(context.Background(), "x"); out != "got x" || err != nil {
			t.Errorf("Call = %q, %v", out, err)
		}
		r := w.Run(context.Background(), "x")
		if r.Status() != "ok" || r.Output != "got x" || r.Attempts != 1 || r.Kind() != "" || r.CallID == "" || r.Tool != "fetch" {
			t.Errorf("Run = %+v", r)
		}
		if w.Name() != "fetch" || w.Description() != "Fetches." {
			t.Errorf("name %q, description %q; want the wrapped tool's", w.Name(), w.Description())
		}
	})
	t.Run("a failure meant for the model is the observation, with a nil error", func(t *testing.T) {
		w := Wrap(semantic)
		out, err := w.Call(context.Background(), "x")
		if out != "no invoice INV-9" || err != nil {
			t.Errorf("Call = %q, %v", out, err)
		}
		r := w.Run(context.Background(), "x")
		if r.Status() != "error" || r.Kind() != middleware.KindToolError || r.Observation() != out || r.Output != "" {
			t.Errorf("Run = %+v", r)
		}
		if !errors.Is(r.Failure, middleware.KindToolError.Err()) || errors.Is(r.Failure, middleware.KindTimeout.Err()) {
			t.Errorf("errors.Is does not tell the failure's kind by its sentinel")
		}
	})
	t.Run("a pause is an error the run stops with", func(t *testing.T) {
		w := Wrap(answer, WithApproval(approval.NewGrants()))
		out, err := w.Call(context.Background(), "x")
		var ar *approval.Required
		if out != "" || !errors.As(err, &ar) || ar.Tool != "fetch" || ar.Input != "x" {
			t.Errorf("Call = %q, %v", out, err)
		}
		if r := w.Run(context.Background(), "x"); r.Status() != "paused" || r.Observation() != "" {
			t.Errorf("Run = %+v", r)
		}
	})
	t.Run("the caller's cancellation is ctx.Err()", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if out, err := Wrap(answer).Call(ctx, "x"); out != "" || !errors.Is(err, context.Canceled) {
			t.Errorf("Call = %q, %v", out, err)
		}
	})
	t.Run("a configuration error is the error of every call", func(t *testing.T) {
		w := Wrap(answer, WithTimeout(-1))
		if _, err := w.Call(context.Background(), "x"); err == nil || err != w.Err() {
			t.Errorf("Call error %v; want Err() %v", err, w.Err())
		}
		var zero Tool
		if _, err := zero.Call(context.Background(), "x"); err == nil {
			t.Error("the zero Tool answered without an error")
		}
	})
}

// The scenario the project started from: fetch_invoice with 3 retries, a
// 2s attempt timeout and a backoff without jitter, on a real flaky upstream.
func TestReferenceScenario(t *testing.T) {
	referenceTool := func(t *testing.T) (*Tool, *toolsafetest.Upstream) {
		t.Helper()
		srv := toolsafetest.NewUpstream(billing.Handler())
		t.Cleanup(srv.Close)
		// No keep-alive: net/http silently resends a GET whose reused
		// connection was reset, which would hide attempts from the count.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		tool, err := New(billing.FetchInvoice(srv.URL(), client),
			WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
				Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25,
				Rand: func() float64 { return 0 },
			}}),
			WithTimeout(2*time.Second),
		)
		if err != nil {
			t.Fatal(err)
		}
		return tool, srv
	}

	t.Run("three transient failures then success is ok after 4 attempts", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		path := billing.InvoicePath("INV-1001")
		// A connection reset, "billing API busy" (503, transient), a reset.
		srv.Enqueue(path, toolsafetest.Reset(), toolsafetest.Unavailable(""), toolsafetest.Reset())

		r := tool.Run(context.Background(), `{"number":"INV-1001"}`)

		if r.Status() != "ok" || r.Attempts != 4 {
			t.Fatalf("status %q after %d attempts (%v); want ok after 4", r.Status(), r.Attempts, r.Failure)
		}
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
		if !slices.Equal(r.Delays, want) {
			t.Errorf("delays %v; want %v", r.Delays, want)
		}
		if !strings.Contains(r.Observation(), "Acme Corp") {
			t.Errorf("observation %q lacks the invoice", r.Observation())
		}
		if got := srv.Requests(path); got != 4 {
			t.Errorf("upstream got %d requests; want 4", got)
		}
	})

	t.Run("a malformed number is a tool-error after 1 attempt", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		r := tool.Run(context.Background(), `{"number":"7"}`)
		if r.Failure == nil || r.Failure.Kind != middleware.KindToolError || r.Attempts != 1 {
			t.Fatalf("got %+v; want tool-error after 1 attempt", r)
		}
		if r.Failure.Retryable {
			t.Error("a tool-error must not be retryable")
		}
		if !strings.Contains(r.Observation(), "INV-1001") {
			t.Errorf("the model is not told how numbers look: %q", r.Observation())
		}
		if srv.Requests("") != 0 {
			t.Errorf("a malformed number reached the upstream")
		}
	})

	t.Run("an upstream that never recovers is tool-failed after 4 attempts", func(t *testing.T) {
		t.Parallel()
		tool, srv := referenceTool(t)
		srv.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())

		r := tool.Run(context.Background(), `{"number":"INV-1002"}`)

		f := r.Failure
		if f == nil || f.Kind != middleware.KindFailed || r.Attempts != 4 || f.Attempts != 4 {
			t.Fatalf("got %+v (%v); want tool-failed after 4 attempts", r, f)
		}
		if f.Retryable {
			t.Error("after exhaustion Retryable must be false")
		}
		msg := r.Observation()
		for _, want := range []string{"fetch_invoice", "4 attempts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if strings.Contains(msg, "reset by peer") || strings.Contains(msg, "127.0.0.1") {
			t.Errorf("message leaks the raw error: %q", msg)
		}
		if !strings.Contains(f.Cause.Error(), "reset by peer") {
			t.Errorf("the raw cause is not kept for logs: %v", f.Cause)
		}
		if !errors.Is(f, f.Cause) {
			t.Error("Failure does not unwrap to its cause")
		}
		// The langchaingo contract: the message is the observation, no error.
		out, err := tool.Call(context.Background(), `{"number":"INV-1002"}`)
		if err != nil || !strings.Contains(out, "fetch_invoice failed") || !strings.Contains(out, "4 attempts") {
			t.Errorf("Call = %q, %v; want the message and a nil error", out, err)
		}
	})
}

// New's doc and the README list the layers in the order of the one table
// New builds from (Layers).
func TestTheDocsListTheLayersInTheTablesOrder(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "tool.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "New" && fn.Recv == nil {
			doc = fn.Doc.Text()
		}
	}
	var inDoc []string
	for _, m := range regexp.MustCompile(`(?m)^\s*\d+\. "([^"]+)"`).FindAllStringSubmatch(doc, -1) {
		inDoc = append(inDoc, m[1])
	}
	if !slices.Equal(inDoc, Layers()) {
		t.Errorf("New's doc lists the layers\n %q\nLayers() is\n %q", inDoc, Layers())
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<!-- layers -->\n(.*?)\n<!-- /layers -->`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no <!-- layers --> list")
	}
	if got := strings.Split(string(m[1]), " → "); !slices.Equal(got, Layers()) {
		t.Errorf("README.md lists the layers\n %q\nLayers() is\n %q", got, Layers())
	}
	design, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	var inDesign []string // the layer table's rows: "| 4 | run ledger (§8) | run ... |"
	for _, m := range regexp.MustCompile(`(?m)^\| \d+ \| ([^|(`+"`"+`]+?)\s*(?:[(`+"`"+`][^|]*)?\|`).FindAllStringSubmatch(string(design), -1) {
		if m[1] != "the tool" {
			inDesign = append(inDesign, m[1])
		}
	}
	if !slices.Equal(inDesign, Layers()) {
		t.Errorf("DESIGN.md's layer table lists\n %q\nLayers() is\n %q", inDesign, Layers())
	}
}
