package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe/otelhook"
)

// Recorder is an in-memory tracer and meter provider and a Hook on them.
type Recorder struct {
	// Spans records every span the Hook ends.
	Spans *tracetest.SpanRecorder
	// Reader collects the Hook's metrics on demand.
	Reader *sdkmetric.ManualReader
	// Hook traces and measures on the Recorder's providers; give it to
	// toolsafe.WithTracing.
	Hook *otelhook.Hook
}

// NewRecorder returns a Recorder whose Hook is made with opts after the
// providers, and shuts the providers down when t ends.
func NewRecorder(t testing.TB, opts ...otelhook.Option) *Recorder {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts = append([]otelhook.Option{otelhook.WithTracerProvider(tp), otelhook.WithMeterProvider(mp)}, opts...)
	return &Recorder{Spans: spans, Reader: reader, Hook: otelhook.New(opts...)}
}

// Text returns everything r recorded that an operator can read, one item a
// line: span names with their status descriptions, span attributes, events
// and their attributes, link attributes, and metric names with their
// attribute sets. A test that plants a secret looks for it here. It fails t
// when the metrics cannot be collected.
func (r *Recorder) Text(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, s := range r.Spans.Ended() {
		fmt.Fprintln(&b, s.Name(), s.Status().Description)
		for _, kv := range s.Attributes() {
			fmt.Fprintln(&b, kv.Key, kv.Value.String())
		}
		for _, e := range s.Events() {
			fmt.Fprintln(&b, e.Name)
			for _, kv := range e.Attributes {
				fmt.Fprintln(&b, kv.Key, kv.Value.String())
			}
		}
		for _, l := range s.Links() {
			for _, kv := range l.Attributes {
				fmt.Fprintln(&b, kv.Key, kv.Value.String())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := r.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range attributeSets(m) {
				fmt.Fprintln(&b, m.Name, set.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	return b.String()
}

// attributeSets are the attribute sets of m's data points, for the kinds of
// metric otelhook records (its gauges included).
func attributeSets(m metricdata.Metrics) []attribute.Set {
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	return sets
}

// Attr returns the value of key among kvs, and whether it is there.
func Attr(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// SpanNamed returns the first of spans called name, or nil.
func SpanNamed(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}
