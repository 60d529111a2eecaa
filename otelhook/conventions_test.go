package otelhook_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/run"
)

// The tracer and the meter declare the GenAI conventions' schema URL.
func TestSpansDeclareTheGenAISchemaURL(t *testing.T) {
	tm := testkit.NewRecorder(t)
	ok := toolsafe.Wrap(middleware.Func("ping", "answers", func(context.Context, string) (string, error) { return "pong", nil }),
		toolsafe.WithTracing(tm.Hook))
	ok.Run(context.Background(), "{}")
	for _, s := range tm.Spans.Ended() {
		if got := s.InstrumentationScope().SchemaURL; got != otelhook.SchemaURL {
			t.Errorf("%s: schema URL %q; want %q", s.Name(), got, otelhook.SchemaURL)
		}
	}
	if !strings.Contains(otelhook.SchemaURL, "/gen-ai-dev/") {
		t.Errorf("SchemaURL %q is not the GenAI conventions' own", otelhook.SchemaURL)
	}
}

// Content capture: off by default; on by the GenAI instrumentations'
// environment switch; an option wins over it; arguments and results are
// structured when they are JSON, text otherwise, and cut at the limit.
func TestContentCapture(t *testing.T) {
	echo := middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	cases := []struct {
		name, env string
		opts      []otelhook.Option
		input     string
		want      attribute.Type // of the arguments; 0 (EMPTY) when not recorded
	}{
		{"off by default", "", nil, `{"a":1}`, 0},
		{"EVENT_ONLY records nothing on spans", "EVENT_ONLY", nil, `{"a":1}`, 0},
		{"true turns it on", "true", nil, `{"a":1}`, attribute.MAP},
		{"SPAN_ONLY turns it on", "span_only", nil, `{"a":1}`, attribute.MAP},
		{"an option wins over the environment", "SPAN_AND_EVENT", []otelhook.Option{otelhook.WithRecordArguments(false), otelhook.WithRecordResults(false)}, `{"a":1}`, 0},
		{"an array is a slice", "", []otelhook.Option{otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true)}, `[1,"x",true]`, attribute.SLICE},
		{"text that is not JSON stays text", "", []otelhook.Option{otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true)}, `Paris`, attribute.STRING},
		{"a repeated key stays text", "", []otelhook.Option{otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true)}, `{"a":1,"a":2}`, attribute.STRING},
		{"two values stay text", "", []otelhook.Option{otelhook.WithRecordArguments(true), otelhook.WithRecordResults(true)}, `{} {}`, attribute.STRING},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(otelhook.ContentEnv, c.env)
			tm := testkit.NewRecorder(t, c.opts...)
			toolsafe.Wrap(echo, toolsafe.WithTracing(tm.Hook)).Run(context.Background(), c.input)
			span, _ := callSpan(t, tm)
			for _, key := range []attribute.Key{keyArguments, keyResult} {
				v, ok := testkit.Attr(span.Attributes(), key)
				switch {
				case c.want == 0 && ok:
					t.Errorf("%s recorded (%s); want none", key, v.String())
				case c.want != 0 && !ok:
					t.Errorf("%s not recorded", key)
				case c.want != 0 && v.Type() != c.want:
					t.Errorf("%s is a %s (%s); want a %s", key, v.Type(), v.String(), c.want)
				}
			}
		})
	}
}

// Content over the limit is cut to at most the limit, on a character
// boundary, and named in toolsafe.truncated.
func TestContentIsCutAtTheLimitInBytes(t *testing.T) {
	tm := testkit.NewRecorder(t, otelhook.WithRecordArguments(true), otelhook.WithContentLimit(10))
	echo := middleware.Func("echo", "echoes", func(_ context.Context, in string) (string, error) { return in, nil })
	toolsafe.Wrap(echo, toolsafe.WithTracing(tm.Hook)).Run(context.Background(), `"ééééééé"`) // 16 bytes
	span, _ := callSpan(t, tm)
	v, _ := testkit.Attr(span.Attributes(), keyArguments)
	if got := v.AsString(); got != `"éééé` {
		t.Errorf("arguments %q; want the first 9 bytes, whole characters only", got)
	}
	wantAttrs(t, "call span", span.Attributes(), otelhook.TruncatedKey.StringSlice([]string{string(keyArguments)}))
	noAttrs(t, "call span", span.Attributes(), keyResult)
}

// A call answered from the run ledger is no tool execution: its span is
// replay_tool, with no attempt span, a summary that says "replayed", and
// the calls metric counts it as replayed, not ok.
func TestAReplayedCallIsNotReportedAsAnExecution(t *testing.T) {
	tm := testkit.NewRecorder(t)
	refund := toolsafe.Wrap(middleware.Func("refund", "refunds", func(context.Context, string) (string, error) { return "done", nil }),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(tm.Hook))
	ledger := run.NewMemoryLedger()
	refund.Run(run.With(context.Background(), "r", ledger), `{"order":1}`)
	tm.Spans.Reset()
	if r := refund.Run(run.With(context.Background(), "r", ledger), `{"order":1}`); !r.Replayed {
		t.Fatalf("%+v; want replayed", r)
	}
	span, kids := callSpan(t, tm)
	if span.Name() != "replay_tool refund" || len(kids) != 0 {
		t.Fatalf("span %q with %d children; want replay_tool refund and no attempt:\n%s", span.Name(), len(kids), dump(tm.Spans.Ended()))
	}
	wantAttrs(t, "replayed span", span.Attributes(),
		attribute.String("gen_ai.operation.name", otelhook.ReplayOperation),
		otelhook.ReplayedKey.Bool(true),
		otelhook.AttemptsKey.Int(0),
		otelhook.SummaryKey.String("replayed from the run ledger: the tool was not called again"))
	tool := keyToolName.String("refund")
	if got := sumOf(t, tm, "toolsafe.tool.calls", tool, otelhook.OutcomeKey.String("replayed")); got != 1 {
		t.Errorf("%d calls counted replayed; want 1", got)
	}
	if got := sumOf(t, tm, "toolsafe.tool.calls", tool, otelhook.OutcomeKey.String("ok")); got != 1 {
		t.Errorf("%d calls counted ok; want 1, the first run's", got)
	}
}

// Regression (guarantees issue, item 14): toolsafe's own attempt timeout,
// the call's deadline and the caller's deadline were all reported as "a
// network timeout", because the tool answered its context's end with a
// net.Error whose Timeout is true. The attempt span and the DEBUG lines
// name the real cause; no span and no line says "a network timeout".
func TestSpansAndLogsNameTheRealCauseNotANetworkTimeout(t *testing.T) {
	waits := middleware.Func("fetch", "fetches", func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", netTimeout{}
	})
	cases := []struct {
		name   string
		opts   []toolsafe.Option
		caller time.Duration
		kind   string
		reason string
	}{
		{"the attempt timeout", []toolsafe.Option{toolsafe.WithTimeout(20 * time.Millisecond)}, 0,
			"tool-timeout", "the attempt timeout (20ms) passed"},
		{"the call's deadline", []toolsafe.Option{toolsafe.WithDeadline(20 * time.Millisecond)}, 0,
			"tool-timeout", "the call's deadline (20ms) passed"},
		{"the caller's deadline", nil, 20 * time.Millisecond,
			"canceled", "the caller's deadline passed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm := testkit.NewRecorder(t)
			logs := &lockedBuffer{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			tool := toolsafe.Wrap(waits, append(c.opts, toolsafe.WithTracing(tm.Hook), toolsafe.WithLogger(log))...)
			ctx := context.Background()
			if c.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.caller)
				defer cancel()
			}
			tool.Run(ctx, "{}")

			_, attempts := callSpan(t, tm)
			if len(attempts) != 1 {
				t.Fatalf("%d attempt spans; want 1", len(attempts))
			}
			wantAttrs(t, "attempt span", attempts[0].Attributes(),
				keyErrorType.String(c.kind), otelhook.ReasonKey.String(c.reason))
			if text := tm.Text(t); strings.Contains(text, "network timeout") {
				t.Errorf("the telemetry says \"network timeout\":\n%s", text)
			}
			lines := logs.String()
			if !strings.Contains(lines, `ended_by="`+c.reason+`"`) {
				t.Errorf("no DEBUG line has ended_by=%q:\n%s", c.reason, lines)
			}
			for _, line := range strings.Split(lines, "\n") {
				if !strings.Contains(line, "level=DEBUG") && strings.Contains(line, "timeout") {
					t.Errorf("an INFO or higher line mentions a timeout's text: %s", line)
				}
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use, for a log
// handler.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
