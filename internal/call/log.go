package call

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// DebugLog logs msg at DEBUG on the call's logger with the call's tool and
// ID, the trace and span IDs when ctx carries a span, and args. Nothing is
// formatted when DEBUG is off. DEBUG is where the raw truth goes: the text
// of foreign errors, upstream bodies, panic values.
func DebugLog(ctx context.Context, c *Call, msg string, args ...any) {
	LogAt(ctx, c, slog.LevelDebug, msg, args...)
}

// Enabled reports whether the call's logger logs at level: a caller that
// must work to build a line's arguments asks first.
func Enabled(ctx context.Context, c *Call, level slog.Level) bool {
	return c.Logger().Enabled(ctx, level)
}

// LogAt logs msg at level on the call's logger, as DebugLog does.
func LogAt(ctx context.Context, c *Call, level slog.Level, msg string, args ...any) {
	l := c.Logger()
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := make([]any, 0, 8+len(args))
	attrs = append(attrs, "tool", c.Tool(), "call_id", c.ID())
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs = append(attrs, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	attrs = append(attrs, args...)
	l.Log(ctx, level, msg, attrs...)
}

// ErrorText is err's text, for DEBUG logs only, followed by the text of
// every error it wraps that its own text leaves out (an ArgsError's or a
// ToolError's text is only what the model is told; the HTTP body is in the
// HTTPError behind it), at most maxErrorText bytes.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	queue := []error{err}
	for n := 0; len(queue) > 0 && n < 32 && len(text) < maxErrorText; n++ {
		e := queue[0]
		queue = queue[1:]
		var causes []error
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			causes = []error{u.Unwrap()}
		case interface{ Unwrap() []error }:
			causes = u.Unwrap()
		}
		for _, c := range causes {
			if c == nil {
				continue
			}
			if t := c.Error(); t != "" && !strings.Contains(text, t) {
				text += ": " + t
			}
			queue = append(queue, c)
		}
	}
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "…"
	}
	return text
}

// maxErrorText caps the text ErrorText logs.
const maxErrorText = 4 << 10

// LogPanic logs a recovered panic: at ERROR its type and stack (a panic's
// value may hold a secret, such as a *url.Error with a key in its URL), and
// at DEBUG its value too.
func LogPanic(ctx context.Context, c *Call, what string, value any, stack []byte, args ...any) {
	LogAt(ctx, c, slog.LevelError, "toolsafe: "+what+" panicked",
		append([]any{"panic_type", fmt.Sprintf("%T", value), "stack", string(stack)}, args...)...)
	DebugLog(ctx, c, "toolsafe: "+what+" panicked: the value", append([]any{"panic", fmt.Sprint(value)}, args...)...)
}
