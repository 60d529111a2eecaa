package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

// gauges collects reader's int64 and float64 gauges as "name{k=v ...}" →
// value.
func gauges(t *testing.T, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	key := func(name string, s attribute.Set) string {
		var kvs []string
		for _, kv := range s.ToSlice() {
			kvs = append(kvs, string(kv.Key)+"="+kv.Value.String())
		}
		return name + "{" + strings.Join(kvs, " ") + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = p.Value
				}
			}
		}
	}
	return out
}

// One replica's gauges show the fleet's state: a breaker another replica
// opened, a request another replica listed, the budget's room over the
// fleet's attempts, and whether Redis answers this replica.
func TestGaugesShowTheFleetsState(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithRecheck(20*time.Millisecond))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	budgets := make([]*redisstore.Budget, 2)
	for i, r := range rs {
		b, err := r.store.NewBudget("billing", 0.5)
		if err != nil {
			t.Fatal(err)
		}
		budgets[i] = b
	}
	ctx := context.Background()

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(ctx) })
	hook := otelhook.New(otelhook.WithMeterProvider(mp))
	viaPolicy, err := rs[1].store.CircuitBreaker("search", policy.Breaker{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := hook.Observe(otelhook.Gauges{
		Breakers:  []otelhook.Breaker{bs[1], viaPolicy},
		Approvals: []otelhook.Approvals{rs[1].store.Grants()},
		Stores:    []otelhook.FleetStore{rs[1].store},
		Budgets:   []otelhook.RetryBudget{budgets[1]},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Unregister() })

	want := func(g map[string]float64, series string, v float64) {
		t.Helper()
		if got, ok := g[series]; !ok || got != v {
			t.Errorf("%s = %v (present %v); want %v; all:\n%v", series, got, ok, v, g)
		}
	}
	g := gauges(t, reader)
	want(g, "toolsafe.circuit_breaker.state{toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=closed toolsafe.scope=fleet}", 1)
	want(g, "toolsafe.circuit_breaker.state{toolsafe.circuit_breaker.name=search toolsafe.circuit_breaker.state=closed toolsafe.scope=fleet}", 1)
	want(g, "toolsafe.fleet_store.up{}", 1)
	want(g, "toolsafe.retry_budget.remaining{toolsafe.retry_budget.name=billing toolsafe.scope=fleet}", 3) // the minimum, nothing counted yet

	// Replica 0 opens the breaker, lists a request, and makes 10 first
	// attempts and 2 retries: at ratio 0.5, 10 retries in all may be made.
	bs[0].TryAcquirePermit()
	bs[0].RecordFailure()
	if bs[1].TryAcquirePermit() { // asks Redis: replica 1 learns the fleet's state
		t.Fatal("replica 1 got a permit from the fleet's open breaker")
	}
	if _, err := rs[0].store.Grants().Decide(ctx, approval.CallInfo{Tool: "refund", Input: `{"order":"A-1"}`}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		budgets[0].Admit(ctx, false)
	}
	for range 2 {
		if !budgets[0].Admit(ctx, true) {
			t.Fatal("a retry within the budget was refused")
		}
	}
	g = gauges(t, reader)
	want(g, "toolsafe.circuit_breaker.state{toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=open toolsafe.scope=fleet}", 1)
	want(g, "toolsafe.circuit_breaker.state{toolsafe.circuit_breaker.name=billing toolsafe.circuit_breaker.state=closed toolsafe.scope=fleet}", 0)
	want(g, "toolsafe.approval.pending{gen_ai.tool.name=refund toolsafe.scope=fleet}", 1)
	if age, ok := g["toolsafe.approval.oldest_age{gen_ai.tool.name=refund toolsafe.scope=fleet}"]; !ok || age < 0 || age > 60 {
		t.Errorf("oldest_age %v (present %v); want the age of a request listed just now", age, ok)
	}
	// The retries carried the first attempts to Redis: 10 first attempts
	// at ratio 0.5 allow 10 retries, and 2 were made.
	want(g, "toolsafe.retry_budget.remaining{toolsafe.retry_budget.name=billing toolsafe.scope=fleet}", 8)

	// Redis goes away: this replica says so, and shows the budget's room
	// over its own counts (it made none) rather than the fleet's.
	srv.Kill()
	rs[1].store.Grants().Pending(ctx) // an operation that fails starts the outage
	g = gauges(t, reader)
	want(g, "toolsafe.fleet_store.up{}", 0)
	want(g, "toolsafe.retry_budget.remaining{toolsafe.retry_budget.name=billing toolsafe.scope=fleet}", 3)
	if _, ok := g["toolsafe.approval.pending{gen_ai.tool.name=refund toolsafe.scope=fleet}"]; ok {
		t.Errorf("the grants' backlog is shown while Redis is down: unknown is not zero:\n%v", g)
	}

	// Redis is back: so is the gauge.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[1].logs.waitFor(t, "INFO", "redis answers again")
	want(gauges(t, reader), "toolsafe.fleet_store.up{}", 1)
}
