// Command storm shows what a dependency that is down costs when many agents
// call it at once, with plain retries and with toolsafe's retry budget and
// circuit breaker.
//
//	go run -C bench ./storm
//
// For each fault and each set of policies, 200 callers call fetch_invoice
// for 2 seconds, each pausing 100ms between its calls (its model thinking),
// against a real HTTP upstream on 127.0.0.1 (toolsafetest.Upstream) that never
// recovers: every request is reset ("reset"), answered 503 ("503", with
// -faults), or never answered ("hang"). Every call has up to 3 retries with
// backoff (100ms, 200ms, 400ms, jitter 25%) and a 250ms attempt timeout.
// The breaker opens after 5 failures in a row and lets one probe through
// every second; the budget lets retries be at most a fifth of the attempts
// in flight. The table gives, per row:
//
//   - calls and requests: logical calls made, upstream requests received;
//   - req/call: upstream requests per logical call (plain retries: 4);
//   - open after: from the start of the storm to the breaker first
//     opening, and how many times it opened;
//   - p50, p90, p99, max: the latency of the calls, as the agents see it;
//   - outcomes: how the calls ended.
//
// The defaults take about 20 seconds; see -help for the flags. With
// -chart FILE it also draws, for the first fault, the requests per second
// reaching the upstream over time under each set of policies (an SVG). Only
// loopback traffic is made.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
)

// Policies is a set of toolsafe policies a storm is run with.
type Policies struct {
	Name    string
	Breaker bool // a circuit breaker for the dependency
	Budget  bool // a retry budget for the dependency
}

// AllPolicies are the sets compared, plain retries first.
var AllPolicies = []Policies{
	{Name: "plain retries"},
	{Name: "retry budget", Budget: true},
	{Name: "breaker", Breaker: true},
	{Name: "breaker + budget", Breaker: true, Budget: true},
}

// Fault is how the upstream is down.
type Fault struct {
	Name string
	Step toolsafetest.Step
}

// AllFaults are the ways the upstream is down.
var AllFaults = []Fault{
	{Name: "reset", Step: toolsafetest.Reset()},
	{Name: "503", Step: toolsafetest.Unavailable("")},
	{Name: "hang", Step: toolsafetest.Hang()},
}

// Config is one storm.
type Config struct {
	Fault    Fault
	Policies Policies
	Callers  int           // concurrent callers
	Duration time.Duration // how long callers keep starting calls
	Think    time.Duration // each caller's pause between its calls, as an agent's model thinks

	// The retry and breaker settings; zero values take the defaults below.
	MaxRetries     int
	Backoff        policy.Backoff
	BreakerDelay   time.Duration
	BreakerTrips   uint
	AttemptTimeout time.Duration
	Deadline       time.Duration
}

// Result is what one storm measured.
type Result struct {
	Config    Config
	Calls     int
	Requests  int             // upstream requests received
	OpenAfter time.Duration   // from the start to the breaker first opening; -1 if it never did
	Opens     int             // times the breaker opened
	Latencies []time.Duration // of every call, sorted
	Outcomes  map[string]int  // "ok" or the failure kind, by count
	Wall      time.Duration   // from the start until the last call returned
	Rate      []float64       // upstream requests per second in each sampleEvery from the start
}

// RequestsPerCall is the upstream requests per logical call.
func (r Result) RequestsPerCall() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.Requests) / float64(r.Calls)
}

// Percentile returns the latency under which a fraction q of the calls
// returned (nearest rank); q = 1 is the maximum.
func (r Result) Percentile(q float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	i := int(q*float64(n)+0.999999) - 1
	return r.Latencies[min(max(i, 0), n-1)]
}

func (c Config) withDefaults() Config {
	if c.Callers <= 0 {
		c.Callers = 200
	}
	if c.Duration <= 0 {
		c.Duration = 2 * time.Second
	}
	if c.Think < 0 {
		c.Think = 0
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.Backoff.Base == 0 {
		c.Backoff = policy.Backoff{Base: 100 * time.Millisecond, Max: 2 * time.Second, Multiplier: 2, Jitter: 0.25}
	}
	if c.BreakerDelay == 0 {
		c.BreakerDelay = time.Second
	}
	if c.BreakerTrips == 0 {
		c.BreakerTrips = 5
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = 250 * time.Millisecond
	}
	if c.Deadline == 0 {
		c.Deadline = 10 * time.Second
	}
	return c
}

// Run runs one storm and returns what it measured.
func Run(ctx context.Context, c Config) (Result, error) {
	c = c.withDefaults()
	const invoice = "INV-1001"
	srv := toolsafetest.NewUpstream(billing.Handler())
	defer srv.Close()
	srv.Always(billing.InvoicePath(invoice), c.Fault.Step)
	// A new connection per request: net/http resends nothing on its own, so
	// the upstream's count is the tool's attempts.
	client := toolsafetest.NoKeepAliveClient()
	defer client.CloseIdleConnections()

	var opens openLog
	tool, err := toolsafe.New(billing.FetchInvoice(srv.URL(), client), toolOptions(c, &opens)...)
	if err != nil {
		return Result{}, err
	}

	records := make([]callerRecord, c.Callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range records {
		wg.Go(func() {
			records[i] = runCaller(ctx, c, tool, invoice, start)
		})
	}
	began := time.Now()
	close(start)
	rate := sampleRate(srv, began)
	wg.Wait()

	res := Result{Config: c, Requests: srv.Requests(""), Wall: time.Since(began), OpenAfter: -1, Outcomes: make(map[string]int),
		Rate: rate()}
	for _, rec := range records {
		res.Latencies = append(res.Latencies, rec.latencies...)
		for k, n := range rec.outcomes {
			res.Outcomes[k] += n
		}
	}
	res.Calls = len(res.Latencies)
	slices.Sort(res.Latencies)
	opens.mu.Lock()
	res.Opens = len(opens.at)
	if len(opens.at) > 0 {
		res.OpenAfter = opens.at[0].Sub(began)
	}
	opens.mu.Unlock()
	return res, ctx.Err()
}

// openLog records when the circuit breaker opened.
type openLog struct {
	mu sync.Mutex
	at []time.Time
}

// toolOptions returns the tool's options for c: retry, timeout and deadline
// always, and the circuit breaker (logging its openings to opens) and the
// retry budget when c's policies ask for them.
func toolOptions(c Config, opens *openLog) []toolsafe.Option {
	retry := policy.Retry{MaxRetries: c.MaxRetries, Backoff: c.Backoff}
	if c.Policies.Budget {
		retry.Budget = budget.NewBuilder().WithMaxRate(0.2).Build()
	}
	opts := []toolsafe.Option{
		toolsafe.WithRetry(retry),
		toolsafe.WithTimeout(c.AttemptTimeout),
		toolsafe.WithDeadline(c.Deadline),
	}
	if c.Policies.Breaker {
		cb := circuitbreaker.NewBuilder[string]().
			WithFailureThreshold(c.BreakerTrips).
			WithDelay(c.BreakerDelay).
			OnOpen(func(circuitbreaker.StateChangedEvent) {
				opens.mu.Lock()
				opens.at = append(opens.at, time.Now())
				opens.mu.Unlock()
			}).
			Build()
		opts = append(opts, toolsafe.WithCircuitBreaker(policy.FromCircuitBreaker("billing", cb)))
	}
	return opts
}

// callerRecord is what one caller measured: every call's latency and the
// count of each outcome.
type callerRecord struct {
	latencies []time.Duration
	outcomes  map[string]int
}

// runCaller waits for start, then calls tool for invoice for c.Duration (or
// until ctx ends), thinking c.Think between calls.
func runCaller(ctx context.Context, c Config, tool *toolsafe.Tool, invoice string, start <-chan struct{}) callerRecord {
	rec := callerRecord{outcomes: make(map[string]int)}
	<-start
	stop := time.Now().Add(c.Duration)
	for time.Now().Before(stop) && ctx.Err() == nil {
		t0 := time.Now()
		r := tool.Run(ctx, invoice)
		rec.latencies = append(rec.latencies, time.Since(t0))
		outcome := "ok"
		if r.Failure != nil {
			outcome = string(r.Failure.Kind)
		}
		rec.outcomes[outcome]++
		think(ctx, c.Think)
	}
	return rec
}

// think waits d, or until ctx ends.
func think(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func main() {
	callers := flag.Int("callers", 200, "concurrent callers")
	duration := flag.Duration("duration", 2*time.Second, "how long each storm's callers keep starting calls")
	think := flag.Duration("think", 100*time.Millisecond, "each caller's pause between calls")
	faults := flag.String("faults", "reset,hang", "comma-separated faults to run: reset, 503, hang")
	chart := flag.String("chart", "", "an SVG file to draw the upstream's requests per second in, for the first fault")
	flag.Parse()

	var selected []Fault
	for _, name := range strings.Split(*faults, ",") {
		i := slices.IndexFunc(AllFaults, func(f Fault) bool { return f.Name == strings.TrimSpace(name) })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "storm: unknown fault %q: use reset, 503 or hang\n", name)
			os.Exit(2)
		}
		selected = append(selected, AllFaults[i])
	}

	c := Config{Callers: *callers, Duration: *duration, Think: *think}.withDefaults()
	fmt.Printf("storm: %d callers for %v per row, %v between calls, against an upstream on 127.0.0.1 that is down;\n", c.Callers, c.Duration, c.Think)
	fmt.Printf("each call: up to %d retries, backoff %v x%g (jitter %g%%), attempt timeout %v; breaker: %d failures in a row, open %v; budget: retries <= 20%% of attempts in flight\n\n",
		c.MaxRetries, c.Backoff.Base, c.Backoff.Multiplier, c.Backoff.Jitter*100, c.AttemptTimeout, c.BreakerTrips, c.BreakerDelay)

	var results []Result
	for _, f := range selected {
		for _, p := range AllPolicies {
			c.Fault, c.Policies = f, p
			r, err := Run(context.Background(), c)
			if err != nil {
				fmt.Fprintln(os.Stderr, "storm:", err)
				os.Exit(1)
			}
			results = append(results, r)
		}
	}
	Print(os.Stdout, results)
	if *chart != "" {
		if err := Chart(*chart, results[:len(AllPolicies)]); err != nil {
			fmt.Fprintln(os.Stderr, "storm:", err)
			os.Exit(1)
		}
	}
}

// Print writes the table of results.
func Print(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fault\tpolicies\tcalls\trequests\treq/call\topen after\tp50\tp90\tp99\tmax\toutcomes\t")
	for _, r := range results {
		open := "-"
		if r.OpenAfter >= 0 {
			open = fmt.Sprintf("%v (x%d)", ms(r.OpenAfter), r.Opens)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f\t%s\t%v\t%v\t%v\t%v\t%s\t\n",
			r.Config.Fault.Name, r.Config.Policies.Name, r.Calls, r.Requests, r.RequestsPerCall(), open,
			ms(r.Percentile(0.5)), ms(r.Percentile(0.9)), ms(r.Percentile(0.99)), ms(r.Percentile(1)),
			outcomes(r))
	}
	_ = tw.Flush()
}

// ms rounds d for the table: to the microsecond under 1ms, to 0.1ms under
// 10ms, else to the millisecond.
func ms(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// outcomes lists how the calls ended, most frequent first, in percent.
func outcomes(r Result) string {
	kinds := make([]string, 0, len(r.Outcomes))
	for k := range r.Outcomes {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if r.Outcomes[kinds[i]] != r.Outcomes[kinds[j]] {
			return r.Outcomes[kinds[i]] > r.Outcomes[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %.0f%%", k, 100*float64(r.Outcomes[k])/float64(r.Calls))
	}
	return strings.Join(parts, ", ")
}
