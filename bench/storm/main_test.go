package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/policy"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A small storm, fast waits: plain retries send every attempt, the breaker
// and budget stop the flood, and the table says so.
func TestStorm(t *testing.T) {
	small := Config{
		Fault:    AllFaults[0], // reset
		Callers:  20,
		Duration: 150 * time.Millisecond,
		Think:    5 * time.Millisecond,
		Backoff:  policy.Backoff{Base: 5 * time.Millisecond, Multiplier: 2},
	}
	plain, guarded := small, small
	plain.Policies = AllPolicies[0]
	guarded.Policies = AllPolicies[3]

	p, err := Run(context.Background(), plain)
	if err != nil {
		t.Fatal(err)
	}
	if p.Calls < small.Callers || p.Requests != 4*p.Calls || p.Outcomes["tool-failed"] != p.Calls {
		t.Errorf("plain retries: %d calls, %d requests, outcomes %v; want at least %d calls, 4 requests each, all tool-failed",
			p.Calls, p.Requests, p.Outcomes, small.Callers)
	}
	if p.OpenAfter != -1 || p.Opens != 0 {
		t.Errorf("plain retries: open after %v, %d opens; want -1 and 0: there is no breaker", p.OpenAfter, p.Opens)
	}

	g, err := Run(context.Background(), guarded)
	if err != nil {
		t.Fatal(err)
	}
	if g.RequestsPerCall() >= 1 || g.Outcomes["circuit-open"] == 0 {
		t.Errorf("breaker + budget: %.2f requests per call, outcomes %v; want fewer than 1, and calls refused by the open breaker",
			g.RequestsPerCall(), g.Outcomes)
	}
	if len(g.Rate) == 0 || len(p.Rate) == 0 {
		t.Errorf("%d and %d samples of the upstream's rate; want some", len(p.Rate), len(g.Rate))
	}
	if g.Opens < 1 || g.OpenAfter < 0 || g.OpenAfter > g.Wall {
		t.Errorf("breaker + budget: opened %d times, first after %v of %v; want at least once, during the storm", g.Opens, g.OpenAfter, g.Wall)
	}
	if len(g.Latencies) != g.Calls || g.Percentile(0.5) > g.Percentile(0.99) || g.Percentile(0.99) > g.Percentile(1) {
		t.Errorf("latencies: %d for %d calls, p50 %v p99 %v max %v; want one per call, in order",
			len(g.Latencies), g.Calls, g.Percentile(0.5), g.Percentile(0.99), g.Percentile(1))
	}

	var out bytes.Buffer
	Print(&out, []Result{p, g})
	for _, row := range []string{
		`(?m)^\s*fault\s+policies\s+calls\s+requests\s+req/call\s+open after\s+p50\s+p90\s+p99\s+max\s+outcomes\s*$`,
		`(?m)^\s*reset\s+plain retries\s+\d+\s+\d+\s+4\.00\s+-\s+.*tool-failed 100%\s*$`,
		`(?m)^\s*reset\s+breaker \+ budget\s+\d+\s+\d+\s+0\.\d\d\s+\S+ \(x\d+\)\s+.*circuit-open \d+%`,
	} {
		if !regexp.MustCompile(row).Match(out.Bytes()) {
			t.Errorf("the table has no line matching %s:\n%s", row, out.String())
		}
	}
}

// The chart is an SVG with a line per storm, each named in its legend.
func TestChart(t *testing.T) {
	rs := []Result{
		{Config: Config{Callers: 2, Fault: AllFaults[0], Policies: AllPolicies[0]}, Rate: []float64{20, 40, 20}},
		{Config: Config{Callers: 2, Fault: AllFaults[0], Policies: AllPolicies[2]}, Rate: []float64{20, 0, 0}},
	}
	path := filepath.Join(t.TempDir(), "storm.svg")
	if err := Chart(path, rs); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "plain retries", "breaker", "requests per second"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("the chart has no %q", want)
		}
	}
	if err := Chart(path, nil); err == nil {
		t.Error("a chart of no storm: no error")
	}
}

func TestPercentile(t *testing.T) {
	r := Result{}
	for i := 1; i <= 100; i++ {
		r.Latencies = append(r.Latencies, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.9: 90 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := r.Percentile(q); got != want {
			t.Errorf("Percentile(%v) = %v; want %v", q, got, want)
		}
	}
	if got := (Result{}).Percentile(0.5); got != 0 {
		t.Errorf("Percentile of no calls = %v; want 0", got)
	}
}
