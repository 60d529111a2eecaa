package otelhook_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/otelhook"
)

// The readers of the spans and metrics a testkit.Recorder recorded, for
// the tests of this package.

const (
	keyErrorType = attribute.Key("error.type")
	keyToolName  = attribute.Key("gen_ai.tool.name")
	keyCallID    = attribute.Key("gen_ai.tool.call.id")
	keyArguments = attribute.Key("gen_ai.tool.call.arguments")
	keyResult    = attribute.Key("gen_ai.tool.call.result")
)

// callSpan returns the one call span tm recorded, the root of the trace, and
// its children in the order they started.
func callSpan(t *testing.T, tm *testkit.Recorder) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	var roots []sdktrace.ReadOnlySpan
	ended := tm.Spans.Ended()
	for _, s := range ended {
		if !s.Parent().IsValid() {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans; want 1 call span:\n%s", len(roots), dump(ended))
	}
	return roots[0], children(ended, roots[0])
}

func children(all []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var kids []sdktrace.ReadOnlySpan
	for _, s := range all {
		if s.Parent().SpanID() == parent.SpanContext().SpanID() && s.Parent().IsValid() {
			kids = append(kids, s)
		}
	}
	slices.SortFunc(kids, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return kids
}

func dump(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "  %s %s parent=%s status=%v %q attrs=%v events=%d\n", s.Name(), s.SpanContext().SpanID(),
			s.Parent().SpanID(), s.Status().Code, s.Status().Description, s.Attributes(), len(s.Events()))
	}
	return b.String()
}

// wantAttrs checks that kvs holds each of want, with its value.
func wantAttrs(t *testing.T, what string, kvs []attribute.KeyValue, want ...attribute.KeyValue) {
	t.Helper()
	for _, w := range want {
		got, ok := testkit.Attr(kvs, w.Key)
		if !ok {
			t.Errorf("%s lacks %s (want %v)", what, w.Key, w.Value.String())
			continue
		}
		if got != w.Value {
			t.Errorf("%s: %s = %v; want %v", what, w.Key, got.String(), w.Value.String())
		}
	}
}

// noAttrs checks that kvs holds none of keys.
func noAttrs(t *testing.T, what string, kvs []attribute.KeyValue, keys ...attribute.Key) {
	t.Helper()
	for _, k := range keys {
		if v, ok := testkit.Attr(kvs, k); ok {
			t.Errorf("%s has %s = %v; want none", what, k, v.String())
		}
	}
}

func eventNames(s sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, e := range s.Events() {
		names = append(names, e.Name)
	}
	return names
}

// checkAttempts checks the attempt spans: named "attempt 1".."attempt n",
// INTERNAL, in the call span's trace, each failed one but the last with
// error.type kind and toolsafe.retryable true.
func checkAttempts(t *testing.T, call sdktrace.ReadOnlySpan, attempts []sdktrace.ReadOnlySpan, n int) {
	t.Helper()
	if len(attempts) != n {
		t.Fatalf("%d attempt spans; want %d:\n%s", len(attempts), n, dump(attempts))
	}
	for i, a := range attempts {
		if want := fmt.Sprintf("attempt %d", i+1); a.Name() != want {
			t.Errorf("span %d is named %q; want %q", i, a.Name(), want)
		}
		if a.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s is %v; want INTERNAL", a.Name(), a.SpanKind())
		}
		if a.SpanContext().TraceID() != call.SpanContext().TraceID() {
			t.Errorf("%s is in another trace", a.Name())
		}
		wantAttrs(t, a.Name(), a.Attributes(), otelhook.AttemptKey.Int(i+1))
	}
}

// sumOf collects tm's metrics and returns the sum of the int64 sum named
// name over the data points that have all of attrs.
func sumOf(t *testing.T, tm *testkit.Recorder, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s is a %T; want an int64 sum", name, m.Data)
			}
		points:
			for _, p := range sum.DataPoints {
				for _, kv := range attrs {
					if v, ok := p.Attributes.Value(kv.Key); !ok || v != kv.Value {
						continue points
					}
				}
				total += p.Value
			}
		}
	}
	return total
}
