package otelhook_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/run"
)

// upstreamKinded is an error type a tool author writes around an API's
// error: it names its own kind from what the upstream answered.
type upstreamKinded struct{ code string }

func (e upstreamKinded) Error() string         { return "upstream: " + e.code }
func (e upstreamKinded) Kind() middleware.Kind { return middleware.Kind(e.code) }

// No label holds an upstream's words: an error that names its own kind
// with the upstream's text must not make that text a label value.
func TestAKindFromUpstreamTextIsNoLabel(t *testing.T) {
	tm := testkit.NewRecorder(t)
	secret := `account 4242 is locked: call +1-555-0100`
	tool := toolsafe.Wrap(middleware.Func("lookup", "Looks up.", func(context.Context, string) (string, error) {
		return "", upstreamKinded{code: secret}
	}), toolsafe.WithTracing(tm.Hook))
	r := tool.Run(context.Background(), `{}`)
	t.Logf("kind the call ended with: %q", r.Kind())
	for _, name := range []string{"toolsafe.tool.calls", "gen_ai.execute_tool.duration"} {
		m, ok := collect(t, tm, name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		var sets []string
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, setString(p.Attributes))
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, setString(p.Attributes))
			}
		}
		for _, s := range sets {
			if strings.Contains(s, "4242") {
				t.Errorf("%s has a label with the upstream's text: %s", name, s)
			}
		}
	}
}

// Two local stores of grants, each with a refund waiting: their series are
// one (tool and scope), so one hides the other. Observe refuses two
// breakers of one name and scope for this reason; grants it takes.
func TestTwoLocalGrantsOneSeries(t *testing.T) {
	tm := testkit.NewRecorder(t)
	a, b := approval.NewGrants(), approval.NewGrants()
	for i, g := range []*approval.Grants{a, b, b} {
		tool := toolsafe.Wrap(middleware.Func("refund", "Refunds.", func(context.Context, string) (string, error) { return "ok", nil }),
			toolsafe.WithApproval(g), toolsafe.WithTracing(tm.Hook))
		tool.Run(context.Background(), `{"order":`+string(rune('1'+i))+`}`)
	}
	reg, err := tm.Hook.Observe(otelhook.Gauges{Approvals: []otelhook.Approvals{a, b}})
	if err != nil {
		t.Logf("Observe refused: %v", err)
		return
	}
	t.Cleanup(func() { _ = reg.Unregister() })
	got := gaugePoints(t, tm, "toolsafe.approval.pending", "{request}")
	t.Logf("pending: %v", got)
	if v := got["gen_ai.tool.name=refund toolsafe.scope=local"]; v != 3 {
		t.Errorf("3 refunds wait (1 in a, 2 in b); the gauge reads %d", v)
	}
}

// fleetGrants is a store of grants a fleet shares, as redisstore's are.
type fleetGrants struct{}

func (fleetGrants) Fleet() bool { return true }
func (fleetGrants) Backlog(context.Context) ([]approval.Backlog, error) {
	return []approval.Backlog{{Tool: "refund", Requests: 1, Oldest: time.Now()}}, nil
}

// The fleet's grants given twice would count each request twice: refused.
func TestTheFleetsGrantsTwiceAreRefused(t *testing.T) {
	tm := testkit.NewRecorder(t)
	_, err := tm.Hook.Observe(otelhook.Gauges{Approvals: []otelhook.Approvals{approval.NewGrants(), fleetGrants{}, fleetGrants{}}})
	if err == nil || !strings.Contains(err.Error(), "Gauges.Approvals[1] and [2] both read the fleet's grants") {
		t.Errorf("Observe = %v; want the fleet's grants given twice refused", err)
	}
	reg, err := tm.Hook.Observe(otelhook.Gauges{Approvals: []otelhook.Approvals{approval.NewGrants(), fleetGrants{}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = reg.Unregister()
}

// A resumed run whose ledger holds a call's failure: the call is answered
// from the ledger (no tool runs), and must not count as an execution, let
// alone a failed one.
func TestAReplayedFailureIsNoExecution(t *testing.T) {
	tm := testkit.NewRecorder(t)
	ran := 0
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) {
		ran++
		return "", middleware.NewToolError("order 1 was refunded already")
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(tm.Hook))
	ledger := run.NewMemoryLedger()
	ctx := context.Background()
	first := refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`)
	second := refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`)
	t.Logf("first: kind %q; second: kind %q replayed %v; the tool ran %d times", first.Kind(), second.Kind(), second.Replayed, ran)
	m, _ := collect(t, tm, "gen_ai.execute_tool.duration")
	var n uint64
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		t.Logf("gen_ai.execute_tool.duration{%s} count %d", setString(p.Attributes), p.Count)
		n += p.Count
	}
	if n != uint64(ran) {
		t.Errorf("%d executions recorded; the tool ran %d times", n, ran)
	}
	c, _ := collect(t, tm, "toolsafe.tool.calls")
	for _, p := range c.Data.(metricdata.Sum[int64]).DataPoints {
		t.Logf("toolsafe.tool.calls{%s} = %d", setString(p.Attributes), p.Value)
	}
}

// lostFinish is a ledger whose first Finish is lost (a crash between the
// tool's answer and the ledger's write).
type lostFinish struct {
	run.Ledger
	lost bool
}

func (l *lostFinish) Finish(ctx context.Context, runID string, e run.Entry) (run.Finished, error) {
	if !l.lost {
		l.lost = true
		return run.Finished{}, errors.New("the store went away")
	}
	return l.Ledger.Finish(ctx, runID, e)
}

// A resumed run whose ledger holds a call's intent and no outcome: the next
// call is refused without running the tool (its outcome is unknown). No
// tool ran: it must not count as a failed execution.
func TestAnUnknownOutcomeIsNoExecution(t *testing.T) {
	tm := testkit.NewRecorder(t)
	ran := 0
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds an order.", func(context.Context, string) (string, error) {
		ran++
		return "refunded", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithTracing(tm.Hook))
	ledger := &lostFinish{Ledger: run.NewMemoryLedger()}
	ctx := context.Background()
	first := refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`)
	second := refund.Run(run.With(ctx, "run-1", ledger), `{"order":1}`)
	t.Logf("first: kind %q; second: kind %q replayed %v %q; the tool ran %d times", first.Kind(), second.Kind(), second.Replayed, second.Observation(), ran)
	m, _ := collect(t, tm, "gen_ai.execute_tool.duration")
	var n uint64
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		t.Logf("gen_ai.execute_tool.duration{%s} count %d", setString(p.Attributes), p.Count)
		n += p.Count
	}
	for _, s := range tm.Spans.Ended() {
		t.Logf("span %s", s.Name())
	}
	if n != uint64(ran) {
		t.Errorf("%d executions recorded; the tool ran %d times", n, ran)
	}
}

// The approvals' age is measured on the clock the grants keep their time
// by (Grants.Now): a request listed just now on that clock has waited
// about 0s, however far that clock is from the wall clock.
func TestApprovalAgeOnTheGrantsClock(t *testing.T) {
	tm := testkit.NewRecorder(t)
	var now atomic.Pointer[time.Time]
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // a test's clock, or one a program keeps
	now.Store(&base)
	grants := &approval.Grants{Now: func() time.Time { return *now.Load() }}
	tool := toolsafe.Wrap(middleware.Func("refund", "Refunds.", func(context.Context, string) (string, error) { return "ok", nil }),
		toolsafe.WithApproval(grants), toolsafe.WithTracing(tm.Hook))
	tool.Run(context.Background(), `{"order":1}`)
	reg, err := tm.Hook.Observe(otelhook.Gauges{Approvals: []otelhook.Approvals{grants}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Unregister() })
	age := func() float64 {
		m, _ := collect(t, tm, "toolsafe.approval.oldest_age")
		points := m.Data.(metricdata.Gauge[float64]).DataPoints
		if len(points) != 1 {
			t.Fatalf("%d series of toolsafe.approval.oldest_age; want refund's", len(points))
		}
		return points[0].Value
	}
	if got := age(); got > 1 {
		t.Errorf("toolsafe.approval.oldest_age = %vs for a request listed now on the grants' clock; want 0", got)
	}
	later := base.Add(10 * time.Minute)
	now.Store(&later)
	if got := age(); got < 599 || got > 601 {
		t.Errorf("toolsafe.approval.oldest_age = %vs ten minutes later on the grants' clock; want 600", got)
	}
}
