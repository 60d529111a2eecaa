package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// debugLog logs msg at DEBUG on the call's logger with the call's tool and
// ID, the trace and span IDs when ctx carries a span, and args. Nothing is
// formatted when DEBUG is off. DEBUG is where the raw truth goes: the text
// of foreign errors, upstream bodies, panic values.
func debugLog(ctx context.Context, c *Call, msg string, args ...any) {
	logAt(ctx, c, slog.LevelDebug, msg, args...)
}

func logAt(ctx context.Context, c *Call, level slog.Level, msg string, args ...any) {
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

// errorText is err's text, for DEBUG logs only, with the cause behind an
// ArgsError, whose own text is only what the model is told.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	var ae *ArgsError
	if errors.As(err, &ae) && ae.Cause != nil {
		return err.Error() + ": " + ae.Cause.Error()
	}
	return err.Error()
}

// logPanic logs a recovered panic: at ERROR its type and stack (a panic's
// value may hold a secret, such as a *url.Error with a key in its URL), and
// at DEBUG its value too.
func logPanic(ctx context.Context, c *Call, what string, value any, stack []byte, args ...any) {
	logAt(ctx, c, slog.LevelError, "toolsafe: "+what+" panicked",
		append([]any{"panic_type", fmt.Sprintf("%T", value), "stack", string(stack)}, args...)...)
	debugLog(ctx, c, "toolsafe: "+what+" panicked: the value", append([]any{"panic", fmt.Sprint(value)}, args...)...)
}
