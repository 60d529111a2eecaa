package otelhook_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// The gauges an operator starts with: which breakers are open, how full
// the bulkheads are, what waits for a person. They are read at each
// collection (a Prometheus scrape through the OpenTelemetry exporter);
// unregister them when the things they read are gone.
func ExampleHook_Observe() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	billing := policy.NewCircuitBreaker("billing", policy.Breaker{})
	billing.Open() // as five failures in a row would
	grants := approval.NewGrants()
	grants.Decide(context.Background(), approval.CallInfo{Tool: "refund", Input: `{"order":"A-1"}`})

	hook := otelhook.New(otelhook.WithMeterProvider(mp))
	reg, err := hook.Observe(otelhook.Gauges{
		Breakers:  []otelhook.Breaker{billing},
		Bulkheads: []otelhook.Bulkhead{policy.NewBulkhead("billing", 8, time.Second)},
		Approvals: []otelhook.Approvals{grants},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Unregister()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if g, ok := m.Data.(metricdata.Gauge[int64]); ok {
			for _, p := range g.DataPoints {
				lines = append(lines, fmt.Sprintf("%s %s: %d", m.Name, setString(p.Attributes), p.Value))
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// toolsafe.approval.pending gen_ai.tool.name=refund toolsafe.scope=local: 1
	// toolsafe.bulkhead.in_use toolsafe.bulkhead.name=billing: 0
	// toolsafe.bulkhead.limit toolsafe.bulkhead.name=billing: 8
	// toolsafe.circuit_breaker.state toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=closed toolsafe.scope=local: 0
	// toolsafe.circuit_breaker.state toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=half-open toolsafe.scope=local: 0
	// toolsafe.circuit_breaker.state toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=open toolsafe.scope=local: 1
}
