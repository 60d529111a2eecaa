package toolsafetest_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/argschema"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// recorder is an in-memory tracer provider and a Hook on it.
func recorder(t *testing.T) (*tracetest.SpanRecorder, *otelhook.Hook, *sdktrace.TracerProvider) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return spans, otelhook.New(otelhook.WithTracerProvider(tp)), tp
}

// busy fails n times with a transient error, then answers.
func busy(n int) tools.Tool {
	calls := 0
	return middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		calls++
		if calls <= n {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return "paid", nil
	})
}

var exact = policy.Backoff{Base: time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}

func tree(t *testing.T, spans []sdktrace.ReadOnlySpan, opts ...toolsafetest.TreeOption) string {
	t.Helper()
	var b strings.Builder
	if err := toolsafetest.WriteSpanTree(&b, spans, opts...); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteSpanTree(t *testing.T) {
	t.Run("a retried call, an agent span above it, without durations", func(t *testing.T) {
		spans, hook, tp := recorder(t)
		tool := toolsafe.Wrap(busy(2), toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: exact}), toolsafe.WithTracing(hook))
		ctx, agent := tp.Tracer("test").Start(context.Background(), "invoke_agent billing")
		tool.Run(ctx, "INV-1001")
		agent.End()
		want := `invoke_agent billing
  execute_tool fetch_invoice  ok after 3 attempts
    attempt 1  tool-failed
    · retry after attempt 1, delay 1ms (tool-failed)
    attempt 2  tool-failed
    · retry after attempt 2, delay 2ms (tool-failed)
    attempt 3
`
		if got := tree(t, spans.Ended(), toolsafetest.WithoutDurations()); got != want {
			t.Errorf("tree:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("with durations, each span has one", func(t *testing.T) {
		spans, hook, _ := recorder(t)
		tool := toolsafe.Wrap(busy(1), toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: exact}), toolsafe.WithTracing(hook))
		tool.Run(context.Background(), "INV-1001")
		got := tree(t, spans.Ended())
		d := `[0-9.]+(µs|ms|s)`
		want := regexp.MustCompile(`^execute_tool fetch_invoice  ` + d + `  ok after 2 attempts
  attempt 1  ` + d + `  tool-failed
  · retry after attempt 1, delay 1ms \(tool-failed\)
  attempt 2  ` + d + `
$`)
		if !want.MatchString(got) {
			t.Errorf("tree:\n%s\nwant it to match:\n%s", got, want)
		}
	})

	t.Run("a fallback, an abandoned attempt, a reason and other events", func(t *testing.T) {
		spans, hook, _ := recorder(t)
		release := make(chan struct{})
		defer close(release)
		stuck := middleware.Func("fetch_invoice", "hangs", func(context.Context, string) (string, error) {
			<-release
			return "late", nil
		})
		archive := toolsafe.Wrap(middleware.Func("search_archive", "", func(context.Context, string) (string, error) {
			return "", middleware.NewToolError("not archived")
		}), toolsafe.WithTracing(hook))
		tool := toolsafe.Wrap(stuck, toolsafe.WithTimeout(5*time.Millisecond), toolsafe.WithTracing(hook),
			toolsafe.WithFallback(fallback.To(archive)))
		r := tool.Run(context.Background(), "INV-1001")
		if r.Kind() != middleware.KindTimeout {
			t.Fatalf("kind %s; want tool-timeout", r.Kind())
		}
		// The model's message is not repeated: the attempts say why.
		want := `execute_tool fetch_invoice  tool-timeout after 1 attempt
  attempt 1  tool-timeout: the attempt timeout (5ms) passed (abandoned: the tool was still running)
  · fallback fallback=search_archive
  execute_tool search_archive  tool-error after 1 attempt
    attempt 1  tool-error: not archived
`
		if got := tree(t, spans.Ended(), toolsafetest.WithoutDurations()); got != want {
			t.Errorf("tree:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("a call refused before any attempt shows the model's message", func(t *testing.T) {
		spans, hook, _ := recorder(t)
		tool := toolsafe.Wrap(middleware.Func("fetch_invoice", "", func(context.Context, string) (string, error) {
			return "never", nil
		}), toolsafe.WithTracing(hook), toolsafe.WithArgs(compiled([]byte(`{"type":"object","required":["number"]}`))))
		r := tool.Run(context.Background(), `{}`)
		if r.Attempts != 0 || r.Kind() != middleware.KindArgsInvalid {
			t.Fatalf("attempts %d kind %s; want 0 and args-invalid", r.Attempts, r.Kind())
		}
		// Spans carry no argument text unless asked to (otelhook.WithRecordArguments).
		want := "execute_tool fetch_invoice  args-invalid: " + r.Failure.MessageWithoutArguments() + "\n"
		if got := tree(t, spans.Ended(), toolsafetest.WithoutDurations()); got != want {
			t.Errorf("tree:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("a span whose parent is missing is a root; a plain error span says error", func(t *testing.T) {
		spans, _, tp := recorder(t)
		ctx, parent := tp.Tracer("test").Start(context.Background(), "not recorded")
		_, child := tp.Tracer("test").Start(ctx, "orphan")
		child.SetStatus(codes.Error, "boom")
		child.End()
		parent.End()
		var orphan []sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			if s.Name() == "orphan" {
				orphan = append(orphan, s)
			}
		}
		if got := tree(t, orphan, toolsafetest.WithoutDurations()); got != "orphan  error\n" {
			t.Errorf("tree %q; want the orphan as a root", got)
		}
		if got := tree(t, nil); got != "" {
			t.Errorf("tree of no spans %q; want nothing", got)
		}
	})

	t.Run("the first error from the writer is returned", func(t *testing.T) {
		spans, hook, _ := recorder(t)
		toolsafe.Wrap(busy(2), toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: exact}), toolsafe.WithTracing(hook)).
			Run(context.Background(), "x")
		w := &failing{after: 2}
		if err := toolsafetest.WriteSpanTree(w, spans.Ended()); !errors.Is(err, errFull) || w.writes != 3 {
			t.Errorf("err %v after %d writes; want errFull after the third, then no more", err, w.writes)
		}
	})
}

var errFull = errors.New("disk full")

// failing fails every write after the first after ones.
type failing struct{ after, writes int }

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.after {
		return 0, errFull
	}
	return len(p), nil
}

// compiled is the compiled form of a schema the test writes itself, as
// toolsafe.WithArgs takes it; a schema that does not compile is the test's
// own mistake.
func compiled(schema []byte) *argschema.Schema {
	s, err := argschema.Compile(schema)
	if err != nil {
		panic(err)
	}
	return s
}
