package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/redis/go-redis/v9"
	"github.com/tmc/langchaingo/tools"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// replicaConfig is what the orchestrator tells a replica process, as JSON
// in its environment.
type replicaConfig struct {
	Index    int
	Shared   bool // the breaker and budget through Redis; else each replica's own
	Redis    string
	Prefix   string
	Upstream string
	Callers  int
	Think    time.Duration
	Verbose  bool
	Config   Config
	Backoff  backoff
}

// backoff is Config.Backoff without its Rand.
type backoff struct {
	Base, Max          time.Duration
	Multiplier, Jitter float64
}

const replicaEnv = "TOOLSAFE_FLEET_REPLICA"

// phaseReport is what one replica saw of one phase.
type phaseReport struct {
	Calls      int            `json:"calls"`
	Unfinished int            `json:"unfinished"`
	Attempts   int            `json:"attempts"`
	Retries    int            `json:"retries"` // retries scheduled: waits before attempts 2..n
	Outcomes   map[string]int `json:"outcomes"`
	Late       int            `json:"late"`
	Slowest    time.Duration  `json:"slowest"`
	// FirstRefusal and FirstOK are when (Unix ns) the first call of the
	// phase was refused with circuit-open, and the first answered.
	FirstRefusal int64 `json:"first_refusal"`
	FirstOK      int64 `json:"first_ok"`
	// Failed are the IDs of the calls that did not answer, to compare with
	// what the upstream answered.
	Failed []string `json:"failed"`
	// Overhead is, per call of one attempt and no wait, the time it spent
	// outside the tool: toolsafe's and the shared store's part.
	Overhead []time.Duration `json:"overhead"`
}

// replicaReport is what a replica prints when told to stop.
type replicaReport struct {
	Index      int            `json:"index"`
	Phases     []*phaseReport `json:"phases"`
	Outages    int64          `json:"outages"`
	Recoveries int64          `json:"recoveries"`
	Local      int64          `json:"local_decisions"`
	Warnings   int            `json:"warnings"`
	// Recovered is when (Unix ns) the store last said Redis answers again.
	Recovered int64 `json:"recovered"`
	Shared    bool  `json:"shared_at_end"`
	// Operations counts the store's Redis operations, by kind.
	Operations map[string]int64 `json:"operations"`
}

// replicaMain runs one replica: it sets up the tool, tells the
// orchestrator it is ready, runs its callers through the phases it is told
// of on standard input, and prints its report when told to stop.
func replicaMain(raw string) error {
	var rc replicaConfig
	if err := json.Unmarshal([]byte(raw), &rc); err != nil {
		return err
	}
	c := rc.Config
	c.Backoff = policy.Backoff{Base: rc.Backoff.Base, Max: rc.Backoff.Max, Multiplier: rc.Backoff.Multiplier, Jitter: rc.Backoff.Jitter}
	logs := &logCounter{verbose: rc.Verbose, index: rc.Index}
	logger := slog.New(logs)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	opts, shared, err := replicaPolicies(rc, c, logger, mp)
	if err != nil {
		return err
	}
	defer shared.close()
	transport := &http.Transport{MaxIdleConnsPerHost: rc.Callers, MaxIdleConns: rc.Callers}
	defer transport.CloseIdleConnections()
	tool, err := toolsafe.New(fetchTool(rc.Upstream, &http.Client{Transport: transport}), opts...)
	if err != nil {
		return err
	}

	r := &runner{rc: rc, tool: tool, phases: make([]*phaseReport, phaseCount), inFlight: make([]int, phaseCount)}
	for i := range r.phases {
		r.phases[i] = &phaseReport{Outcomes: map[string]int{}}
	}
	fmt.Println("ready")
	if err := r.serve(os.Stdin, c.Deadline); err != nil {
		return err
	}

	rep := replicaReport{Index: rc.Index, Phases: r.phases, Warnings: logs.warnings(), Recovered: logs.recovered()}
	if shared != nil {
		if err := shared.addTo(&rep, reader); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// sharedStore is a replica's Redis store and the breaker it shares.
type sharedStore struct {
	client  redis.UniversalClient
	store   *redisstore.Store
	breaker *redisstore.Breaker
}

// close closes the store, then its client; a nil sharedStore has none.
func (s *sharedStore) close() {
	if s == nil {
		return
	}
	if s.store != nil {
		s.store.Close()
	}
	s.client.Close()
}

// addTo adds what the store saw (its outages, recoveries, local decisions
// and operations, and whether the breaker shares at the end) to rep.
func (s *sharedStore) addTo(rep *replicaReport, reader *sdkmetric.ManualReader) error {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return err
	}
	sums := counters(rm)
	rep.Outages, rep.Recoveries, rep.Local = sums["toolsafe.redisstore.outages"], sums["toolsafe.redisstore.recoveries"], sums["toolsafe.redisstore.local_decisions"]
	rep.Shared = s.store.Available() && s.breaker.Shared()
	rep.Operations = operations(rm)
	return nil
}

// replicaPolicies returns the tool's options: its timeouts, retries, breaker
// and retry budget, either the replica's own or shared through the Redis
// of the sharedStore it returns (nil when not shared), to be closed.
func replicaPolicies(rc replicaConfig, c Config, logger *slog.Logger, mp *sdkmetric.MeterProvider) ([]toolsafe.Option, *sharedStore, error) {
	retry := policy.Retry{MaxRetries: c.MaxRetries, Backoff: c.Backoff}
	opts := []toolsafe.Option{toolsafe.WithTimeout(c.AttemptTimeout), toolsafe.WithDeadline(c.Deadline), toolsafe.WithLogger(logger)}
	if !rc.Shared {
		retry.Budget = budget.NewBuilder().WithMaxRate(c.Ratio).Build()
		opts = append(opts, toolsafe.WithCircuitBreaker(policy.NewCircuitBreaker("billing", c.Breaker)),
			toolsafe.WithRetry(retry))
		return opts, nil, nil
	}
	s := &sharedStore{client: redistest.NewClient(rc.Redis)} // several addresses: a cluster's
	fail := func(err error) ([]toolsafe.Option, *sharedStore, error) {
		s.close()
		return nil, nil, err
	}
	var err error
	s.store, err = redisstore.New(s.client, redisstore.WithPrefix(rc.Prefix), redisstore.WithLogger(logger), redisstore.WithMeterProvider(mp),
		redisstore.WithRecheck(c.Recheck))
	if err != nil {
		return fail(err)
	}
	cb, err := s.store.CircuitBreaker("billing", c.Breaker)
	if err != nil {
		return fail(err)
	}
	s.breaker = cb.CircuitBreaker.(*redisstore.Breaker)
	b, err := s.store.RetryBudget("billing", c.Ratio)
	if err != nil {
		return fail(err)
	}
	retry.Shared = b
	opts = append(opts, toolsafe.WithCircuitBreaker(cb), toolsafe.WithRetry(retry))
	return opts, s, nil
}

type runner struct {
	rc       replicaConfig
	tool     *toolsafe.Tool
	phase    atomic.Int32
	mu       sync.Mutex
	phases   []*phaseReport
	inFlight []int // calls begun and not returned, by phase
}

// serve runs the callers through the phases that the commands read from
// in name ("phase N", then "stop"), then waits for their calls to
// return, counting as unfinished those still running a second past
// deadline.
func (r *runner) serve(in io.Reader, deadline time.Duration) error {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range r.rc.Callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.caller(i, stop)
		}()
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "phase" {
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 0 || n >= phaseCount {
				return fmt.Errorf("bad phase %q", sc.Text())
			}
			r.phase.Store(int32(n))
			continue
		}
		if len(f) == 1 && f[0] == "stop" {
			break
		}
		return fmt.Errorf("unknown command %q", sc.Text())
	}
	close(stop)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(deadline + time.Second): // a call past its deadline by a second will not return
		r.mu.Lock()
		for i, n := range r.inFlight {
			r.phases[i].Unfinished = n
		}
		r.mu.Unlock()
	}
	return nil
}

// callKey carries the call's account of its time in the tool.
type callKey struct{}

type callState struct {
	id     string
	inTool atomic.Int64 // ns
}

// caller makes calls until stop, pausing between them as a model thinks.
func (r *runner) caller(i int, stop <-chan struct{}) {
	rnd := rand.New(rand.NewPCG(uint64(r.rc.Index), uint64(i)))
	deadline := r.rc.Config.Deadline
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		ph := int(r.phase.Load())
		cs := &callState{id: fmt.Sprintf("%s-r%d-c%d-%d", r.rc.Prefix, r.rc.Index, i, seq)}
		ctx := context.WithValue(context.Background(), callKey{}, cs)
		r.mu.Lock()
		r.inFlight[ph]++
		r.mu.Unlock()
		start := time.Now()
		res := r.tool.Run(ctx, `{"number":"INV-1001"}`)
		elapsed := time.Since(start)

		r.mu.Lock()
		r.inFlight[ph]--
		p := r.phases[ph]
		p.Calls++
		p.Attempts += res.Attempts
		p.Retries += len(res.Delays)
		outcome := res.Status()
		if res.Failure != nil {
			outcome = string(res.Failure.Kind)
			p.Failed = append(p.Failed, cs.id)
		}
		p.Outcomes[outcome]++
		now := time.Now().UnixNano()
		if outcome == string(middleware.KindCircuitOpen) && p.FirstRefusal == 0 {
			p.FirstRefusal = now
		}
		if outcome == "ok" && p.FirstOK == 0 {
			p.FirstOK = now
		}
		if elapsed > deadline+lateTolerance {
			p.Late++
		}
		p.Slowest = max(p.Slowest, elapsed)
		if res.Attempts <= 1 && len(res.Delays) == 0 {
			p.Overhead = append(p.Overhead, elapsed-time.Duration(cs.inTool.Load()))
		}
		r.mu.Unlock()

		think := time.Duration(float64(r.rc.Think) * (0.5 + rnd.Float64()))
		select {
		case <-stop:
			return
		case <-time.After(think): // the model thinking: the load, not a wait for an event
		}
	}
}

// fetchTool fetches an invoice from the upstream: one POST per attempt,
// with the call's ID and whether it is a half-open probe.
func fetchTool(base string, client *http.Client) tools.Tool {
	return middleware.Func("fetch_invoice", "fetches an invoice", func(ctx context.Context, input string) (string, error) {
		cs, _ := ctx.Value(callKey{}).(*callState)
		start := time.Now()
		defer func() {
			if cs != nil {
				cs.inTool.Add(int64(time.Since(start)))
			}
		}()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/invoice", strings.NewReader(input))
		if err != nil {
			return "", err
		}
		if cs != nil {
			req.Header.Set("X-Call", cs.id)
		}
		if policy.IsProbe(ctx) {
			req.Header.Set("X-Probe", "1")
		}
		return middleware.DoHTTP(client, req)
	})
}

// logCounter is the replica's slog handler: it counts the store's
// warnings, notes when Redis answered again, and writes every record to
// standard error when verbose.
type logCounter struct {
	verbose bool
	index   int
	mu      sync.Mutex
	warns   int
	back    int64
}

func (l *logCounter) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo || l.verbose
}

func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "redisstore:") {
		l.warns++
	}
	if strings.HasPrefix(r.Message, "redisstore: redis answers again") {
		l.back = r.Time.UnixNano()
	}
	l.mu.Unlock()
	if l.verbose {
		var attrs []string
		r.Attrs(func(a slog.Attr) bool {
			attrs = append(attrs, a.String())
			return true
		})
		fmt.Fprintf(os.Stderr, "replica %d: %s %s %s %s\n", l.index, r.Time.Format("15:04:05.000"), r.Level, r.Message, strings.Join(attrs, " "))
	}
	return nil
}

func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }

func (l *logCounter) warnings() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warns
}

func (l *logCounter) recovered() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.back
}

// operations counts the store's Redis operations by kind, from its
// duration histogram.
func operations(rm metricdata.ResourceMetrics) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || m.Name != "toolsafe.redisstore.operation.duration" {
				continue
			}
			for _, dp := range h.DataPoints {
				op, _ := dp.Attributes.Value("toolsafe.redisstore.operation")
				out[op.AsString()] += int64(dp.Count)
			}
		}
	}
	return out
}

func counters(rm metricdata.ResourceMetrics) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					out[m.Name] += dp.Value
				}
			}
		}
	}
	return out
}
