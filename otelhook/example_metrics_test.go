package otelhook_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// The hook's metrics, read through a ManualReader as a test or a scrape
// would: calls by tool and outcome, attempts by tool, and the GenAI
// conventions' gen_ai.execute_tool.duration, with error.type when the call
// failed.
func ExampleWithMeterProvider() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	calls := 0
	fetch := middleware.Func("fetch_invoice", "Fetches one invoice.", func(_ context.Context, number string) (string, error) {
		calls++
		if number == "INV-2001" || calls == 1 {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return `{"status":"paid"}`, nil
	})
	invoice := toolsafe.Wrap(fetch,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(time.Millisecond)}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithMeterProvider(mp))))
	invoice.Run(context.Background(), "INV-1001") // ok on attempt 2
	invoice.Run(context.Background(), "INV-2001") // fails 3 times

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	attrs := func(set attribute.Set) string {
		var kvs []string
		for _, kv := range set.ToSlice() {
			kvs = append(kvs, string(kv.Key)+"="+kv.Value.AsString())
		}
		return " " + fmt.Sprint(kvs)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s: %d", m.Name, attrs(dp.Attributes), dp.Value))
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s: %d recorded", m.Name, attrs(dp.Attributes), dp.Count))
				}
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// gen_ai.execute_tool.duration [error.type=tool-failed gen_ai.tool.name=fetch_invoice gen_ai.tool.type=function]: 1 recorded
	// gen_ai.execute_tool.duration [gen_ai.tool.name=fetch_invoice gen_ai.tool.type=function]: 1 recorded
	// toolsafe.tool.attempts [gen_ai.tool.name=fetch_invoice]: 5
	// toolsafe.tool.call.duration [gen_ai.tool.name=fetch_invoice toolsafe.outcome=ok]: 1 recorded
	// toolsafe.tool.call.duration [gen_ai.tool.name=fetch_invoice toolsafe.outcome=tool-failed]: 1 recorded
	// toolsafe.tool.calls [gen_ai.tool.name=fetch_invoice toolsafe.outcome=ok]: 1
	// toolsafe.tool.calls [gen_ai.tool.name=fetch_invoice toolsafe.outcome=tool-failed]: 1
}

// Exporting the spans to Jaeger (or any OTLP collector) from your own
// program: the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (such as
// http://localhost:4318, Jaeger's OTLP/HTTP port) and the other standard
// OTEL_ variables itself; the hook uses the global tracer provider.
func ExampleNew_otlp() {
	ctx := context.Background()
	exporter, err := otlptracehttp.New(ctx) // endpoint from the environment
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp:", err)
		return
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
	defer tp.Shutdown(ctx) // flushes the spans still batched

	tool := toolsafe.Wrap(middleware.Func("search", "Searches the index.", func(_ context.Context, q string) (string, error) {
		return "3 results for " + q, nil
	}), toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))))
	fmt.Println(tool.Run(ctx, "vpn").Observation())
}
