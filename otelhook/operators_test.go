package otelhook_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// collect returns the metric named name that tm's reader collects now, and
// whether there is one.
func collect(t *testing.T, tm *testkit.Recorder, name string) (metricdata.Metrics, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				if sm.Scope.Name != otelhook.ScopeName {
					t.Errorf("%s is in scope %q; want %q", name, sm.Scope.Name, otelhook.ScopeName)
				}
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// setString is a set's attributes as "k=v k=v", sorted by key.
func setString(s attribute.Set) string {
	var kvs []string
	for _, kv := range s.ToSlice() {
		kvs = append(kvs, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(kvs, " ")
}

// gaugePoints returns the points of the int64 gauge named name, by their
// attributes, with its unit checked.
func gaugePoints(t *testing.T, tm *testkit.Recorder, name, unit string) map[string]int64 {
	t.Helper()
	m, ok := collect(t, tm, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	if m.Unit != unit {
		t.Errorf("%s has unit %q; want %q", name, m.Unit, unit)
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok {
		t.Fatalf("%s is a %T; want an int64 gauge", name, m.Data)
	}
	out := map[string]int64{}
	for _, p := range g.DataPoints {
		out[setString(p.Attributes)] = p.Value
	}
	return out
}

func equalPoints[V comparable](t *testing.T, name string, got, want map[string]V) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d series %v; want %v", name, len(got), got, want)
		return
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s{%s} = %v (present %v); want %v; all: %v", name, k, g, ok, v, got)
		}
	}
}

// The GenAI conventions' tool metric, as semantic-conventions-genai v0.1.0
// defines it: a histogram in seconds with their bucket boundaries,
// gen_ai.tool.name and gen_ai.tool.type, error.type when the call failed,
// and the call span's duration as its value; a replay is no execution.
func TestTheExecuteToolDurationIsTheGenAIConventions(t *testing.T) {
	tm := testkit.NewRecorder(t)
	tool, srv := testkit.Billing(t,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 1, Backoff: testkit.Backoff(time.Millisecond)}),
		toolsafe.WithTracing(tm.Hook))
	srv.Always(billing.InvoicePath("INV-1002"), toolsafetest.Reset())
	ctx := context.Background()
	tool.Run(ctx, "INV-1001") // ok
	tool.Run(ctx, "INV-1002") // tool-failed after 2 attempts
	tool.Run(ctx, "7")        // tool-error

	// A call answered from the run ledger ran no tool.
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) { return "done", nil }),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(tm.Hook))
	ledger := run.NewMemoryLedger()
	refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`)
	if r := refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`); !r.Replayed {
		t.Fatalf("%+v; want replayed", r)
	}

	m, ok := collect(t, tm, "gen_ai.execute_tool.duration")
	if !ok {
		t.Fatal("no gen_ai.execute_tool.duration")
	}
	if m.Unit != "s" || m.Description != "The duration of a single tool execution." {
		t.Errorf("unit %q, description %q; want s and the conventions' brief", m.Unit, m.Description)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("gen_ai.execute_tool.duration is a %T; want a float64 histogram", m.Data)
	}
	conventions := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	got := map[string]uint64{}
	sums := map[string]float64{}
	for _, p := range h.DataPoints {
		if !slices.Equal(p.Bounds, conventions) {
			t.Errorf("bounds %v; want the conventions' %v", p.Bounds, conventions)
		}
		got[setString(p.Attributes)] = p.Count
		sums[setString(p.Attributes)] = p.Sum
	}
	equalPoints(t, "gen_ai.execute_tool.duration count", got, map[string]uint64{
		"gen_ai.tool.name=fetch_invoice gen_ai.tool.type=function":                        1,
		"gen_ai.tool.name=refund gen_ai.tool.type=function":                               1, // not its replay
		"error.type=tool-failed gen_ai.tool.name=fetch_invoice gen_ai.tool.type=function": 1,
		"error.type=tool-error gen_ai.tool.name=fetch_invoice gen_ai.tool.type=function":  1,
	})

	// The metric's value is the call span's duration, to the nanosecond.
	var spanSum float64
	for _, s := range tm.Spans.Ended() {
		if strings.HasPrefix(s.Name(), "execute_tool ") {
			spanSum += s.EndTime().Sub(s.StartTime()).Seconds()
		}
	}
	var metricSum float64
	for _, v := range sums {
		metricSum += v
	}
	if d := metricSum - spanSum; d > 1e-9 || d < -1e-9 {
		t.Errorf("the metric's durations add up to %vs, the execute_tool spans' to %vs; want the same", metricSum, spanSum)
	}
}

// A pause for approval and the caller's cancellation are no errors, on the
// metric as on the span: no error.type.
func TestAPauseIsAnExecutionWithoutAnError(t *testing.T) {
	tm := testkit.NewRecorder(t)
	refund := middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) { return "refunded", nil })
	tool := toolsafe.Wrap(refund, toolsafe.WithApproval(approval.NewGrants()), toolsafe.WithTracing(tm.Hook))
	if r := tool.Run(context.Background(), `{"order":"A-1"}`); r.Failure == nil || r.Failure.Kind != middleware.KindApprovalRequired {
		t.Fatalf("got %v; want a pause", r.Failure)
	}
	m, ok := collect(t, tm, "gen_ai.execute_tool.duration")
	if !ok {
		t.Fatal("no gen_ai.execute_tool.duration")
	}
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if got := setString(p.Attributes); got != "gen_ai.tool.name=refund gen_ai.tool.type=function" {
			t.Errorf("a pause recorded with %s; want no error.type", got)
		}
	}
}

// The gauges read what is open, busy and waiting at each collection.
func TestGauges(t *testing.T) {
	ctx := context.Background()
	tm := testkit.NewRecorder(t)
	billingCB := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	ledgerCB := policy.NewCircuitBreaker("ledger", policy.Breaker{})
	bh := policy.NewBulkhead("billing", 2, 0)
	grants := approval.NewGrants()
	reg, err := tm.Hook.Observe(otelhook.Gauges{
		Breakers:  []otelhook.Breaker{billingCB, ledgerCB},
		Bulkheads: []otelhook.Bulkhead{bh},
		Approvals: []otelhook.Approvals{grants},
	})
	if err != nil {
		t.Fatal(err)
	}

	states := func(billing, ledger string) map[string]int64 {
		want := map[string]int64{}
		for _, dep := range []struct{ name, now string }{{"billing", billing}, {"ledger", ledger}} {
			for _, st := range []string{"closed", "half-open", "open"} {
				v := int64(0)
				if st == dep.now {
					v = 1
				}
				want["toolsafe.circuit_breaker.name="+dep.name+" toolsafe.circuit_breaker.state="+st+" toolsafe.scope=local"] = v
			}
		}
		return want
	}
	t.Run("breaker state: 1 for the state each breaker is in", func(t *testing.T) {
		equalPoints(t, "state", gaugePoints(t, tm, "toolsafe.circuit_breaker.state", "{state}"), states("closed", "closed"))

		// One failure reaching the upstream opens billing's breaker.
		fail := middleware.Func("fetch_invoice", "Fetches.", func(context.Context, string) (string, error) {
			return "", middleware.Transient(errors.New("upstream reset"))
		})
		toolsafe.Wrap(fail, toolsafe.WithCircuitBreaker(billingCB), toolsafe.WithTracing(tm.Hook)).Run(ctx, "INV-1")
		equalPoints(t, "state", gaugePoints(t, tm, "toolsafe.circuit_breaker.state", "{state}"), states("open", "closed"))

		ledgerCB.HalfOpen()
		equalPoints(t, "state", gaugePoints(t, tm, "toolsafe.circuit_breaker.state", "{state}"), states("open", "half-open"))
	})

	t.Run("an open breaker whose delay passed shows half-open: the next attempt probes", func(t *testing.T) {
		tm := testkit.NewRecorder(t)
		cb := policy.NewCircuitBreaker("search", policy.Breaker{Delay: time.Nanosecond})
		cb.Open()
		if cb.RemainingDelay() > 0 {
			t.Fatal("the delay has not passed")
		}
		if _, err := tm.Hook.Observe(otelhook.Gauges{Breakers: []otelhook.Breaker{cb}}); err != nil {
			t.Fatal(err)
		}
		got := gaugePoints(t, tm, "toolsafe.circuit_breaker.state", "{state}")
		if got["toolsafe.circuit_breaker.name=search toolsafe.circuit_breaker.state=half-open toolsafe.scope=local"] != 1 {
			t.Errorf("states %v; want half-open", got)
		}
	})

	t.Run("bulkhead: permits held and in all", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		slow := middleware.Func("fetch_invoice", "Fetches.", func(context.Context, string) (string, error) {
			started <- struct{}{}
			<-release
			return "ok", nil
		})
		tool := toolsafe.Wrap(slow, toolsafe.WithBulkhead(bh), toolsafe.WithTracing(tm.Hook))
		done := make(chan struct{})
		go func() {
			defer close(done)
			tool.Run(ctx, "INV-1")
		}()
		<-started
		equalPoints(t, "in_use", gaugePoints(t, tm, "toolsafe.bulkhead.in_use", "{permit}"), map[string]int64{"toolsafe.bulkhead.name=billing": 1})
		equalPoints(t, "limit", gaugePoints(t, tm, "toolsafe.bulkhead.limit", "{permit}"), map[string]int64{"toolsafe.bulkhead.name=billing": 2})
		close(release)
		<-done
		equalPoints(t, "in_use", gaugePoints(t, tm, "toolsafe.bulkhead.in_use", "{permit}"), map[string]int64{"toolsafe.bulkhead.name=billing": 0})
	})

	t.Run("approvals: requests waiting by tool and the oldest's age", func(t *testing.T) {
		listed := time.Now().Add(-5 * time.Minute)
		grants.Now = func() time.Time { return listed }
		refund := middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) { return "refunded", nil })
		tool := toolsafe.Wrap(refund, toolsafe.WithApproval(grants), toolsafe.WithTracing(tm.Hook))
		tool.Run(ctx, `{"order":"A-1"}`)
		tool.Run(ctx, `{"order":"A-2"}`)
		grants.Now = nil

		equalPoints(t, "pending", gaugePoints(t, tm, "toolsafe.approval.pending", "{request}"),
			map[string]int64{"gen_ai.tool.name=refund toolsafe.scope=local": 2})
		m, ok := collect(t, tm, "toolsafe.approval.oldest_age")
		if !ok || m.Unit != "s" {
			t.Fatalf("oldest_age %v (present %v); want a gauge in s", m.Unit, ok)
		}
		ages := m.Data.(metricdata.Gauge[float64]).DataPoints
		if len(ages) != 1 || setString(ages[0].Attributes) != "gen_ai.tool.name=refund toolsafe.scope=local" || ages[0].Value < 300 || ages[0].Value > 3600 {
			t.Fatalf("ages %+v; want refund's, at least 300s (listed 5 minutes ago)", ages)
		}

		for _, r := range grants.Requests() {
			if _, err := grants.Answer(r.ID, approval.Denied, "ops", ""); err != nil {
				t.Fatal(err)
			}
		}
		equalPoints(t, "pending", gaugePoints(t, tm, "toolsafe.approval.pending", "{request}"),
			map[string]int64{"gen_ai.tool.name=refund toolsafe.scope=local": 0})
	})

	t.Run("unregistered, the gauges are read no more", func(t *testing.T) {
		if err := reg.Unregister(); err != nil {
			t.Fatal(err)
		}
		if m, ok := collect(t, tm, "toolsafe.circuit_breaker.state"); ok && len(m.Data.(metricdata.Gauge[int64]).DataPoints) > 0 {
			t.Errorf("still observed: %+v", m.Data)
		}
	})
}

func TestObserveRefusesWhatItCannotRead(t *testing.T) {
	h := otelhook.New()
	var nilCB *policy.CircuitBreaker
	var nilGrants *approval.Grants
	for _, c := range []struct {
		g    otelhook.Gauges
		want string
	}{
		{otelhook.Gauges{}, "holds nothing to observe"},
		{otelhook.Gauges{Breakers: []otelhook.Breaker{nilCB}}, "Gauges.Breakers[0] is nil"},
		{otelhook.Gauges{Breakers: []otelhook.Breaker{&policy.CircuitBreaker{}}}, "Gauges.Breakers[0] is nil (or the zero policy.CircuitBreaker: build it with policy.NewCircuitBreaker)"},
		{otelhook.Gauges{Bulkheads: []otelhook.Bulkhead{&policy.Bulkhead{}}}, "Gauges.Bulkheads[0] is nil"},
		{otelhook.Gauges{Approvals: []otelhook.Approvals{approval.NewGrants(), nilGrants}}, "Gauges.Approvals[1] is nil"},
		{otelhook.Gauges{Approvals: []otelhook.Approvals{nil}}, "Gauges.Approvals[0] is nil"},
		{otelhook.Gauges{Stores: []otelhook.FleetStore{nil, nil}}, "Gauges.Stores holds 2 stores"},
		// Two breakers of one name: the exporter keeps one point per series,
		// so an open one could be shown closed and its alert never fire.
		{otelhook.Gauges{Breakers: []otelhook.Breaker{
			policy.NewCircuitBreaker("billing", policy.Breaker{}), policy.NewCircuitBreaker("billing", policy.Breaker{}),
		}}, `Gauges.Breakers[0] and [1] are both breaker "billing (local)"`},
		{otelhook.Gauges{Bulkheads: []otelhook.Bulkhead{
			policy.NewBulkhead("billing", 2, 0), policy.NewBulkhead("billing", 4, 0),
		}}, `Gauges.Bulkheads[0] and [1] are both bulkhead "billing"`},
	} {
		reg, err := h.Observe(c.g)
		if err == nil || !strings.Contains(err.Error(), c.want) || reg != nil {
			t.Errorf("Observe(%+v) = %v, %v; want an error saying %q", c.g, reg, err, c.want)
		}
	}
}

// No gauge label holds an upstream's words: breakers, bulkheads and
// approvals are named by the program, tools by their names.
func TestGaugesKeepUpstreamTextOut(t *testing.T) {
	tm := testkit.NewRecorder(t)
	cb := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	bh := policy.NewBulkhead("billing", 1, 0)
	grants := approval.NewGrants()
	if _, err := tm.Hook.Observe(otelhook.Gauges{Breakers: []otelhook.Breaker{cb}, Bulkheads: []otelhook.Bulkhead{bh}, Approvals: []otelhook.Approvals{grants}}); err != nil {
		t.Fatal(err)
	}
	leaky := middleware.Func("leaky", "Fails with secrets.", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New(secretErr))
	})
	for _, tool := range []tools.Tool{
		toolsafe.Wrap(leaky, toolsafe.WithCircuitBreaker(cb), toolsafe.WithBulkhead(bh), toolsafe.WithTracing(tm.Hook)),
		toolsafe.Wrap(leaky, toolsafe.WithApproval(grants), toolsafe.WithTracing(tm.Hook)),
	} {
		tool.Call(context.Background(), `{"card":"`+secretArg+`"}`)
	}
	got := tm.Text(t)
	for _, want := range []string{"toolsafe.circuit_breaker.state", "toolsafe.bulkhead.in_use", "toolsafe.approval.pending"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in the telemetry:\n%s", want, got)
		}
	}
	for _, secret := range []string{secretArg, secretErr, "password"} {
		if strings.Contains(got, secret) {
			t.Errorf("the telemetry holds %q:\n%s", secret, got)
		}
	}
}
