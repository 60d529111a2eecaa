package otelhook

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// WithHostCallSpan makes the Hook add to the call span a host framework
// started (ADK for Go's "execute_tool {tool}") instead of starting one: the
// recording span in the call's context gets the call span's attributes,
// events and status, the attempt spans go under it, and the host ends it.
// Without one there (or under another call's) the Hook starts its own. Off by default.
func WithHostCallSpan() Option {
	return optionFunc(func(c *config) { c.hostSpan = true })
}

// hostKey marks a context whose span a call of this package joined, so
// that a call made inside it (a fallback's alternative tool) starts a span
// of its own rather than join its caller's.
type hostKey struct{}

// startSpan starts the call span named name, or, with WithHostCallSpan,
// joins the host's span in ctx: it sets the attributes of opts on it and
// returns it in a wrapper whose End does nothing, so that the host ends it.
func (h *Hook) startSpan(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	if h.cfg.hostSpan {
		host := trace.SpanFromContext(ctx)
		if joined, _ := ctx.Value(hostKey{}).(trace.Span); host.IsRecording() && joined != host {
			cfg := trace.NewSpanStartConfig(opts...)
			host.SetAttributes(cfg.Attributes()...)
			return context.WithValue(ctx, hostKey{}, host), hostSpan{host}
		}
	}
	return h.tracer().Start(ctx, name, opts...)
}

// hostSpan is a host's span that a call joined: the host ends it.
type hostSpan struct{ trace.Span }

// End does nothing: the span is the host's to end.
func (hostSpan) End(...trace.SpanEndOption) {}
