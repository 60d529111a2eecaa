// Package tracetext sets up tracing for the example programs: spans go to
// an OTLP/HTTP collector such as Jaeger when OTEL_EXPORTER_OTLP_ENDPOINT is
// set, and are printed as an indented tree (toolsafetest.WriteSpanTree)
// otherwise, so a first-time user sees the calls and their attempts without
// installing anything.
//
//	tr, err := tracetext.Setup(ctx, "toolsafe-billing")
//	if err != nil { ... }
//	defer tr.Finish(context.Background(), os.Stdout)
//	hook := otelhook.New(otelhook.WithTracerProvider(tr.TracerProvider()))
//	// ... tools wrapped with toolsafe.WithTracing(hook) ...
//	runCtx, end := tr.StartAgent(ctx, "billing")
//	out, err := executor.Call(runCtx, inputs)
//	end()
//
// It is internal: a program of your own sets up its SDK as it likes.
package tracetext

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

// tracerName is the instrumentation scope of the agent run's span.
const tracerName = "github.com/toolsafe/toolsafe/examples/internal/tracetext"

// finishTimeout bounds how long Finish waits for the collector.
const finishTimeout = 15 * time.Second

// Tracing is a tracer provider whose spans are exported over OTLP/HTTP, or
// kept in memory to be printed by Finish. Its methods are safe for
// concurrent use.
type Tracing struct {
	tp       *sdktrace.TracerProvider
	recorder *tracetest.SpanRecorder
	endpoint string // "" when not exporting
}

// Setup returns the tracing of a program named service (the service.name
// resource attribute; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
// over it). When OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, spans are batched and exported
// there over OTLP/HTTP (otlptracehttp reads the rest of its configuration,
// such as OTEL_EXPORTER_OTLP_HEADERS, from the environment; an http://
// endpoint is sent to without TLS). Either way they are also recorded in
// memory for Finish. It returns an error when the exporter or the resource
// cannot be made.
func Setup(ctx context.Context, service string) (*Tracing, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceNameKey.String(service)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracetext: resource: %w", err)
	}
	t := &Tracing{recorder: tracetest.NewSpanRecorder()}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(t.recorder),
	}
	t.endpoint = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if t.endpoint == "" {
		t.endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if t.endpoint != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("tracetext: OTLP/HTTP exporter for %s: %w", t.endpoint, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	t.tp = sdktrace.NewTracerProvider(opts...)
	return t, nil
}

// TracerProvider is the provider to give to otelhook.WithTracerProvider.
func (t *Tracing) TracerProvider() trace.TracerProvider { return t.tp }

// StartAgent starts the span of one agent run, "invoke_agent {name}" with
// gen_ai.operation.name "invoke_agent" and gen_ai.agent.name (GenAI
// semantic conventions v1.41.0), and returns a context that carries it: the
// tool calls made with that context are its children, so the whole run is
// one trace. Call end when the run is over, before Finish.
func (t *Tracing) StartAgent(ctx context.Context, name string) (context.Context, func()) {
	ctx, span := t.tp.Tracer(tracerName).Start(ctx, "invoke_agent "+name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(name)))
	return ctx, func() { span.End() }
}

// Exporting reports whether spans are exported over OTLP.
func (t *Tracing) Exporting() bool { return t.endpoint != "" }

// Finish ends the tracing: it flushes the spans to the collector, waiting
// at most 15 s, and shuts the provider down. When exporting, it writes to w
// where the spans went and the IDs of their traces; otherwise it writes the
// span tree (toolsafetest.WriteSpanTree). Call it once, after the last span
// ended; it returns the error of the flush, if any, else that of writing to
// w.
func (t *Tracing) Finish(ctx context.Context, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	err := t.tp.Shutdown(ctx)
	spans := t.recorder.Ended()
	if !t.Exporting() {
		if werr := toolsafetest.WriteSpanTree(w, spans); err == nil {
			err = werr
		}
		return err
	}
	// The traces in the order they started.
	spans = slices.Clone(spans)
	slices.SortStableFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	var ids []string
	for _, s := range spans {
		if id := s.SpanContext().TraceID().String(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if err != nil {
		fmt.Fprintf(w, "traces: exporting %d spans to %s failed: %v\n", len(spans), t.endpoint, err)
		return fmt.Errorf("tracetext: export to %s: %w", t.endpoint, err)
	}
	fmt.Fprintf(w, "traces: %d spans exported over OTLP/HTTP to %s; trace IDs: %s\n",
		len(spans), t.endpoint, strings.Join(ids, ", "))
	return nil
}
