//lint:file-ignore SA1019 these tests hold the deprecated options to what they still do, until they go

package test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"

	"go.opentelemetry.io/otel/codes"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// Regression: the caller's cancellation left the call span Unset but turned
// "attempt 1" red with error.type canceled; when the caller's own deadline
// passed, "attempt 1" said tool-timeout, blaming the tool.
func TestTheCallersCancellationTurnsNoSpanRed(t *testing.T) {
	for name, end := range map[string]func(context.Context) (context.Context, context.CancelFunc){
		"cancel": func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		},
		"the caller's deadline": func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 20*time.Millisecond)
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr := testkit.NewRecorder(t)
			hook, rec := tr.Hook, tr.Spans
			slow := middleware.Func("slow", "", func(ctx context.Context, _ string) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			})
			tool := toolsafe.Wrap(slow, toolsafe.WithTracing(hook), toolsafe.WithTimeout(time.Minute))
			ctx, cancel := end(context.Background())
			defer cancel()
			if r := tool.Run(ctx, "x"); r.Kind() != middleware.KindCanceled {
				t.Fatalf("kind %v; want canceled", r.Kind())
			}
			for _, s := range rec.Ended() {
				if s.Status().Code == codes.Error {
					t.Errorf("span %q is red: %v", s.Name(), s.Status())
				}
			}
			a := testkit.SpanNamed(rec.Ended(), "attempt 1")
			if a == nil {
				t.Fatal("no span attempt 1")
			}
			if v, _ := testkit.Attr(a.Attributes(), "error.type"); v.AsString() != "canceled" {
				t.Errorf("attempt span error.type %q; want canceled, not the tool's timeout", v.AsString())
			}
		})
	}
}

// Regression: the primary failed, its fallback was a *Tool whose schema
// refused an unknown key holding a secret; with argument recording off the
// primary's span status and toolsafe.summary quoted the key.
func TestArgumentTextOfAFallbackReachesNoSpan(t *testing.T) {
	tr := testkit.NewRecorder(t)
	hook, rec := tr.Hook, tr.Spans
	const secret = "sk_live_KEYNAME"
	alt := toolsafe.Wrap(testkit.Done("archive", new(atomic.Int32)), toolsafe.WithTracing(hook),
		toolsafe.WithArgsSchema([]byte(`{"type":"object","additionalProperties":false,"properties":{"q":{"type":"string"}}}`)))
	primary := toolsafe.Wrap(middleware.Func("search", "", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("search is down")
	}), toolsafe.WithTracing(hook), toolsafe.WithFallback(fallback.To(alt)))
	r := primary.Run(context.Background(), `{"q":"x","`+secret+`":1}`)
	if r.Failure == nil || r.Failure.FallbackFailure == nil || r.Failure.FallbackFailure.Kind != middleware.KindArgsInvalid {
		t.Fatalf("failure %+v; want the alternative's args-invalid", r.Failure)
	}
	if !strings.Contains(r.Observation(), secret) {
		t.Errorf("the model was not told which argument is wrong: %q", r.Observation())
	}
	for _, s := range rec.Ended() {
		text := s.Status().Description
		for _, kv := range s.Attributes() {
			text += " " + fmt.Sprint(kv.Value.AsInterface())
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				text += " " + fmt.Sprint(kv.Value.AsInterface())
			}
		}
		if strings.Contains(text, secret) {
			t.Errorf("span %q quotes the argument: %s", s.Name(), text)
		}
	}
}

// debugLogger logs everything as text into buf.
func debugLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Regression: the README said the raw error is logged at DEBUG, but the
// error= field was the model-facing text whenever there were retries, a
// side-effect guard or a deadline; and no retry was logged.
func TestDebugLogsCarryTheRawTruth(t *testing.T) {
	var buf bytes.Buffer
	hook := testkit.NewRecorder(t).Hook
	const raw = "pq: password authentication failed for user billing"
	tool := toolsafe.Wrap(middleware.Func("fetch", "", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New(raw))
	}), toolsafe.WithLogger(debugLogger(&buf)), toolsafe.WithTracing(hook),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(0)}),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithDeadline(time.Minute))
	r := tool.Run(context.Background(), "x")
	if strings.Contains(r.Observation(), raw) {
		t.Fatalf("the model saw the raw error: %q", r.Observation())
	}
	var retries, failed int
	for _, l := range strings.Split(buf.String(), "\n") {
		switch {
		case strings.Contains(l, `msg="toolsafe: retrying"`):
			retries++
		case strings.Contains(l, `msg="toolsafe: tool call failed"`):
			failed++
		default:
			continue
		}
		for _, want := range []string{"level=DEBUG", raw, "tool=fetch", "call_id=" + r.CallID, "kind=tool-failed", "trace_id=", "span_id="} {
			if !strings.Contains(l, want) {
				t.Errorf("log line lacks %q: %s", want, l)
			}
		}
	}
	if retries != 2 || failed != 1 {
		t.Errorf("%d retry lines and %d failure lines; want 2 and 1:\n%s", retries, failed, buf.String())
	}
}

// Regression: a 404's body, and an approver's error, reached no log: the
// DEBUG line said only "the service answered 404 Not Found".
func TestDebugLogsCarryTheCausesBehindAModelMessage(t *testing.T) {
	const body = `{"error":"invoice INV-9 archived to cold storage, ask ops (ticket OPS-77)"}`
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, body)
	}))
	defer up.Close()
	client := toolsafetest.NoKeepAliveClient()
	var buf bytes.Buffer
	fetch := toolsafe.Wrap(middleware.Func("fetch_invoice", "", func(ctx context.Context, _ string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, up.URL()+"/invoices/INV-9", nil)
		return middleware.DoHTTP(client, req)
	}), toolsafe.WithLogger(debugLogger(&buf)))
	r := fetch.Run(context.Background(), "INV-9")
	if r.Kind() != middleware.KindToolError || strings.Contains(r.Observation(), "OPS-77") {
		t.Fatalf("%v: %q; want a tool-error without the body", r.Kind(), r.Observation())
	}
	if !strings.Contains(buf.String(), "level=DEBUG") || !strings.Contains(buf.String(), "OPS-77") {
		t.Errorf("no DEBUG line has the body:\n%s", buf.String())
	}

	buf.Reset()
	const secret = "approvals DB: connection refused at 10.0.0.7:5432"
	gated := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) { return "done", nil }),
		toolsafe.WithLogger(debugLogger(&buf)),
		toolsafe.WithApproval(approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
			return approval.Pending, errors.New(secret)
		})))
	if r := gated.Run(context.Background(), "A-1"); r.Kind() != middleware.KindApprovalRequired {
		t.Fatalf("%v; want a pause", r.Kind())
	}
	var debug, above bool
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, secret) {
			if strings.Contains(l, "level=DEBUG") {
				debug = true
			} else {
				above = true
			}
		}
	}
	if !debug || above || !strings.Contains(buf.String(), `level=WARN msg="toolsafe: the approver could not decide; the call pauses"`) {
		t.Errorf("want the approver's error at DEBUG only, and a WARN line without it:\n%s", buf.String())
	}
}

// Regression: panic(*url.Error) put the API key in its URL into the ERROR
// log.
func TestAPanicsValueIsLoggedOnlyAtDebug(t *testing.T) {
	const key = "sk_live_51Habc"
	boom := middleware.Func("boom", "", func(context.Context, string) (string, error) {
		panic(&url.Error{Op: "Get", URL: "https://api.example.com/v1?api_key=" + key, Err: errors.New("bad")})
	})
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		if r := toolsafe.Wrap(boom, toolsafe.WithLogger(logger)).Run(context.Background(), "x"); r.Kind() != middleware.KindPanic {
			t.Fatalf("kind %v; want tool-panic", r.Kind())
		}
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "level=ERROR") && (strings.Contains(l, key) || !strings.Contains(l, "panic_type=*url.Error")) {
				t.Errorf("ERROR line %q; want the panic's type, never its value", l)
			}
		}
		if got := strings.Contains(buf.String(), key); got != (level == slog.LevelDebug) {
			t.Errorf("at %v the log holds the panic's value: %v; want only at DEBUG", level, got)
		}
	}
}
