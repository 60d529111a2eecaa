// Command fleet measures what sharing breakers and retry budgets through
// Redis does for a fleet of agent replicas, and what Redis costs them.
//
//	go run -C redisstore ./bench/fleet            # about 35 seconds
//	go run -C redisstore ./bench/fleet -short -check
//	go run -C redisstore ./bench/fleet -cluster   # on a Redis Cluster, a master killed
//
// (The command lives in the redisstore module, so that the core module
// never requires go-redis; -C runs it from the repository's root.)
//
// It starts a redis-server of its own on a free port of 127.0.0.1 (Debian's
// redis-server must be installed), with -cluster a Redis Cluster of its own
// (3 masters with a replica each, as scripts/redis-cluster.sh makes it), or
// uses the Redis in REDIS_ADDR (several addresses, comma-separated: a
// cluster's nodes); one
// flaky billing upstream on 127.0.0.1 (toolsafetest.Upstream); and 4
// replica processes, real OS processes (this program, started again), with
// 50 callers each. Every caller calls fetch_invoice, pausing about 100ms
// between calls as its model thinks; every call has 2 retries (backoff 20ms
// ×2, jitter 25%) within a retry budget of 20% of the attempts, a 250ms
// attempt timeout, a 1s deadline and a breaker that opens after 5 failures
// in a row, for 500ms, then lets 2 probes through.
//
// It runs the phases twice, once with each replica's own breaker and
// budget (local) and once with the breaker and budget shared through Redis
// (package redisstore):
//
//  1. warm-up (not reported): the upstream answers;
//  2. upstream down: every request is answered 503 after 20ms;
//  3. upstream back: it answers again;
//  4. Redis killed (shared only): the upstream answers, Redis is killed
//     (SIGKILL) a third into the phase and restarted, empty, two thirds in.
//     With REDIS_ADDR, which is not the program's to kill, it is paused
//     instead (CLIENT PAUSE) for that third. With -cluster the master that
//     holds the breaker's state is killed (SIGKILL) a third into the phase
//     and stays dead: its replica is promoted (about 4s later), and the
//     phase lasts until 3s after the promotion, at least its length.
//
// Per phase it prints the calls, the upstream requests and requests per
// logical call fleet-wide, the retries, how long until every replica
// refused (the first phase) or answered again (the next ones), the most
// half-open probes at the upstream at once fleet-wide, lost results (calls
// that did not answer although the upstream answered them, and calls that
// never returned), late returns (past their deadline by more than 10ms),
// and the time each call of one attempt spent outside the tool, p50 and
// p99: toolsafe's part, and with sharing Redis's too, whose difference is
// what Redis adds per attempt. Then what the replicas' stores saw (outages,
// warnings, local decisions), the keys left in Redis, the goals, and a last
// line:
//
//	fleet: <N> replicas, requests per call while down <R>, lost <L>, late <T>
//
// The goals: with sharing, while the upstream is down, at most 1.1
// requests per logical call fleet-wide and at most Probes probes at once;
// no lost result and no late return in any phase, Redis killed included;
// Redis adds at most 1ms at p99 per attempt on loopback; each replica logs
// one warning per outage and shares again once Redis is back (with
// -cluster, within 2s of the promotion); no call is answered twice by the
// upstream (applied twice). With -check the exit status is 1 when a goal of
// behaviour is missed; the speed goal (Redis's p99) fails it only with
// -check-speed as well, since a busy machine misses it with the same code.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// The phases, in order.
const (
	phaseWarmup = iota
	phaseDown
	phaseBack
	phaseRedis
	phaseCount
)

var phaseNames = [phaseCount]string{"warm-up", "upstream down", "upstream back", "redis killed"}

// masterKilled is the last phase's name on a cluster.
const masterKilled = "master killed"

// lateTolerance is how far past its deadline a call may return without
// being late: time for a busy machine to run the caller again.
const lateTolerance = 10 * time.Millisecond

// Config is one run of the benchmark; DefaultConfig is the README's.
type Config struct {
	Replicas       int            // replica processes
	Callers        int            // callers per replica, each making one call at a time
	Phase          time.Duration  // each phase's length; the warm-up is half of it
	Think          time.Duration  // a caller's mean pause between calls (uniform in 0.5..1.5 of it)
	MaxRetries     int            // retries of a call after its first attempt
	Backoff        policy.Backoff `json:"-"` // the wait before a retry; sent to replicas as backoff (it holds a func)
	AttemptTimeout time.Duration  // each attempt's limit
	Deadline       time.Duration  // each call's limit, waits included; a call later than it by 10ms is late
	Breaker        policy.Breaker // the billing dependency's breaker
	Ratio          float64        // the retry budget: the largest share of attempts that may be retries
	DownLatency    time.Duration  // how long the down upstream takes to answer 503
	Recheck        time.Duration  // the stores' recheck of an unavailable Redis
	Cluster        bool           // a Redis Cluster of its own, a master killed in the last phase
	Verbose        bool           // the replicas' logs to standard error
}

// DefaultConfig is the benchmark of the README.
func DefaultConfig() Config {
	return Config{
		Replicas: 4, Callers: 50, Phase: 4 * time.Second, Think: 100 * time.Millisecond,
		MaxRetries:     2,
		Backoff:        policy.Backoff{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond, Multiplier: 2, Jitter: 0.25},
		AttemptTimeout: 250 * time.Millisecond, Deadline: time.Second,
		Breaker:     policy.Breaker{FailureThreshold: 5, Delay: 500 * time.Millisecond, Probes: 2},
		Ratio:       0.2,
		DownLatency: 20 * time.Millisecond,
		Recheck:     250 * time.Millisecond,
	}
}

func main() {
	if raw := os.Getenv(replicaEnv); raw != "" {
		if err := replicaMain(raw); err != nil {
			fmt.Fprintln(os.Stderr, "fleet replica:", err)
			os.Exit(1)
		}
		return
	}
	c := DefaultConfig()
	short := flag.Bool("short", false, "phases of 2s instead of 4s: for CI")
	check := flag.Bool("check", false, "exit with status 1 when a goal of behaviour is missed (requests, probes, lost, late, warnings, sharing again, applied twice, TTLs)")
	checkSpeed := flag.Bool("check-speed", false, "with -check, exit with status 1 when the speed goal (what Redis adds at p99) is missed too: judge it on a quiet machine")
	flag.IntVar(&c.Replicas, "replicas", c.Replicas, "replica processes")
	flag.IntVar(&c.Callers, "callers", c.Callers, "callers per replica")
	flag.DurationVar(&c.Phase, "phase", c.Phase, "length of each phase")
	flag.DurationVar(&c.Think, "think", c.Think, "mean pause of a caller between calls")
	flag.BoolVar(&c.Verbose, "v", false, "print the replicas' logs on standard error")
	flag.BoolVar(&c.Cluster, "cluster", false, "on a Redis Cluster of its own (3 masters, a replica each); a master is killed in the last phase")
	flag.Parse()
	if *short {
		c.Phase = 2 * time.Second
	}
	s, err := Run(context.Background(), c, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(2)
	}
	if *check && (len(s.Missed) > 0 || *checkSpeed && len(s.MissedSpeed) > 0) {
		os.Exit(1)
	}
}

// Summary is what a run found, and the goals it missed.
type Summary struct {
	RequestsPerCallDown float64
	Lost, Late, Twice   int
	Missed              []string // goals of behaviour
	MissedSpeed         []string // the speed goal: Redis's p99
}

// modeRun is what one mode's replicas and upstream saw.
type modeRun struct {
	shared   bool
	starts   [phaseCount]time.Time
	reports  []replicaReport
	requests [phaseCount]int
	probes   [phaseCount]int
	lost     [phaseCount]int
	keys     int
	noTTL    int
	redisAt  [2]time.Time // when Redis was killed and restarted (paused and resumed; on a cluster, the master killed and its replica promoted)
	twice    int          // calls the upstream answered more than once
	layout   string       // on a cluster: which master held which key, and which was killed
}

// target is the Redis of a run: REDIS_ADDR's, or a server or cluster of
// the program's own.
type target struct {
	addr    string // one address, or a cluster's, comma-separated
	srv     *redistest.Server
	cluster *redistest.Cluster
	version string
}

func (t *target) close() {
	if t.srv != nil {
		t.srv.Close()
	}
	if t.cluster != nil {
		t.cluster.Close()
	}
}

// Run runs the benchmark and writes its report to w.
func Run(ctx context.Context, c Config, w io.Writer) (Summary, error) {
	tg, err := redisFor(ctx, c.Cluster)
	if err != nil {
		return Summary{}, err
	}
	defer tg.close()
	up := newUpstream(c.DownLatency)
	defer up.Close()

	fmt.Fprintf(w, "fleet: %d replicas × %d callers, phases of %v, a call every ~%v per caller\n", c.Replicas, c.Callers, c.Phase, c.Think)
	fmt.Fprintf(w, "  policies: breaker %d failures in a row, open %v, %d probes; %d retries (%v ×%g), budget %g%%; attempt timeout %v, deadline %v\n",
		c.Breaker.FailureThreshold, c.Breaker.Delay, c.Breaker.Probes, c.MaxRetries, c.Backoff.Base, c.Backoff.Multiplier, c.Ratio*100, c.AttemptTimeout, c.Deadline)
	how := "killed (SIGKILL) and restarted, empty"
	switch {
	case tg.cluster != nil:
		how = "a cluster of 3 masters with a replica each; the breaker's master killed (SIGKILL), its replica promoted,"
	case tg.srv == nil:
		how = "paused (CLIENT PAUSE): REDIS_ADDR is not this program's to kill"
	}
	fmt.Fprintf(w, "  upstream %s: down, it answers 503 after %v; %s at %s, %s in the last phase\n\n", up.URL(), c.DownLatency, tg.version, tg.addr, how)

	var runs []*modeRun
	for _, shared := range []bool{false, true} {
		up.reset()
		m, err := runMode(ctx, c, shared, tg, up)
		if err != nil {
			return Summary{}, err
		}
		runs = append(runs, m)
	}
	return report(w, c, runs), nil
}

// redisFor returns the Redis of the run: REDIS_ADDR's, or a server or a
// cluster (with cluster) of its own.
func redisFor(ctx context.Context, cluster bool) (*target, error) {
	tg := &target{}
	var err error
	switch {
	case cluster:
		if tg.cluster, err = redistest.StartCluster(nil); err != nil {
			return nil, err
		}
		tg.addr = tg.cluster.Addrs()
	case os.Getenv("REDIS_ADDR") != "":
		if tg.addr, err = redistest.Addr(); err != nil {
			return nil, err
		}
	default:
		if tg.srv, err = redistest.Start(nil); err != nil {
			return nil, fmt.Errorf("%w (or set REDIS_ADDR)", err)
		}
		tg.addr = tg.srv.Addr()
	}
	client := redis.NewClient(&redis.Options{Addr: redistest.Addrs(tg.addr)[0]})
	defer client.Close()
	info, err := client.Info(ctx, "server").Result()
	if err != nil {
		tg.close()
		return nil, err
	}
	tg.version = "redis"
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			tg.version = "redis " + v
		}
	}
	return tg, nil
}

// proc is one replica process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *strings.Builder
}

func (p *proc) send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// runMode runs the phases with every replica's own breaker and budget, or
// with them shared.
func runMode(ctx context.Context, c Config, shared bool, tg *target, up *upstream) (*modeRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "fleetbench-" + hex.EncodeToString(b[:])
	m := &modeRun{shared: shared}

	procs := make([]*proc, c.Replicas)
	defer func() {
		for _, p := range procs {
			if p != nil && p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	}()
	for i := range procs {
		rc := replicaConfig{Index: i, Shared: shared, Redis: tg.addr, Prefix: prefix,
			Upstream: up.URL(), Callers: c.Callers, Think: c.Think, Verbose: c.Verbose, Config: c,
			Backoff: backoff{c.Backoff.Base, c.Backoff.Max, c.Backoff.Multiplier, c.Backoff.Jitter}}
		if procs[i], err = startReplica(ctx, exe, rc); err != nil {
			return nil, err
		}
	}
	for i, p := range procs {
		if !p.lines.Scan() || p.lines.Text() != "ready" {
			return nil, fmt.Errorf("replica %d did not start: %s", i, p.stderr)
		}
	}

	if err := runPhases(ctx, c, procs, tg, prefix, up, m); err != nil {
		return nil, err
	}
	if err := stopReplicas(c, procs, m); err != nil {
		return nil, err
	}
	tally(m, up)
	m.twice = up.twice()
	if shared {
		if err := checkKeys(ctx, tg.addr, prefix, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// startReplica starts exe as the replica rc describes.
func startReplica(ctx context.Context, exe string, rc replicaConfig) (*proc, error) {
	raw, err := json.Marshal(rc)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(raw))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &strings.Builder{}
	cmd.Stderr = &lockedWriter{w: stderr}
	if rc.Verbose {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &proc{cmd: cmd, stdin: stdin, lines: sc, stderr: stderr}, nil
}

// runPhases runs the phases of m's mode, the last (Redis cut off) only
// when shared, telling the upstream and every replica when each begins.
func runPhases(ctx context.Context, c Config, procs []*proc, tg *target, prefix string, up *upstream, m *modeRun) error {
	last := phaseBack
	if m.shared {
		last = phaseRedis
	}
	for ph := phaseWarmup; ph <= last; ph++ {
		up.setPhase(ph)
		switch ph {
		case phaseDown:
			up.down.Store(true)
		case phaseBack:
			up.down.Store(false)
		}
		m.starts[ph] = time.Now()
		for _, p := range procs {
			if err := p.send(fmt.Sprintf("phase %d", ph)); err != nil {
				return err
			}
		}
		length := c.Phase
		if ph == phaseWarmup {
			length = c.Phase / 2
		}
		if ph == phaseRedis {
			cut := cutRedis
			if tg.cluster != nil {
				cut = killMaster
			}
			if err := cut(ctx, tg, prefix, length, m); err != nil {
				return err
			}
			continue
		}
		time.Sleep(length) // the phase: load runs in the replicas meanwhile
	}
	return nil
}

// stopReplicas stops every replica and keeps its report in m, in the
// replicas' order.
func stopReplicas(c Config, procs []*proc, m *modeRun) error {
	for _, p := range procs {
		if err := p.send("stop"); err != nil {
			return err
		}
	}
	for i, p := range procs {
		done := make(chan error, 1)
		var rep replicaReport
		go func() {
			if !p.lines.Scan() {
				done <- fmt.Errorf("replica %d did not report: %s", i, p.stderr)
				return
			}
			done <- json.Unmarshal(p.lines.Bytes(), &rep)
		}()
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			m.reports = append(m.reports, rep)
		case <-time.After(c.Deadline + 10*time.Second):
			return fmt.Errorf("replica %d did not report within %v of the stop", i, c.Deadline+10*time.Second)
		}
		_ = p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			return fmt.Errorf("replica %d: %v: %s", i, err, p.stderr)
		}
	}
	sort.Slice(m.reports, func(i, j int) bool { return m.reports[i].Index < m.reports[j].Index })
	return nil
}

// tally counts, per phase, the upstream's requests and most probes at once,
// and the results lost: calls that never returned, and failed calls the
// upstream answered.
func tally(m *modeRun, up *upstream) {
	for ph := phaseWarmup; ph < phaseCount; ph++ {
		m.requests[ph], m.probes[ph] = up.counts(ph)
		for _, r := range m.reports {
			p := r.Phases[ph]
			m.lost[ph] += p.Unfinished
			for _, id := range p.Failed {
				if up.wasAnswered(id) {
					m.lost[ph]++
				}
			}
		}
	}
}

// cutRedis runs the last phase: Redis is cut off a third into it, and back
// two thirds in.
func cutRedis(ctx context.Context, tg *target, _ string, length time.Duration, m *modeRun) error {
	third := length / 3
	time.Sleep(third)
	m.redisAt[0] = time.Now()
	if tg.srv != nil {
		tg.srv.Kill()
		time.Sleep(third)
		m.redisAt[1] = time.Now()
		if err := tg.srv.Restart(); err != nil {
			return err
		}
	} else {
		client := redis.NewClient(&redis.Options{Addr: redistest.Addrs(tg.addr)[0]})
		err := client.ClientPause(ctx, third).Err()
		client.Close()
		if err != nil {
			return err
		}
		time.Sleep(third)
		m.redisAt[1] = time.Now()
	}
	time.Sleep(length - 2*third)
	return nil
}

// killMaster runs the last phase on a cluster: the master that holds the
// breaker's state is killed a third into it, and stays dead; the phase
// lasts until 3s after its replica is promoted, at least its length.
func killMaster(ctx context.Context, tg *target, prefix string, length time.Duration, m *modeRun) error {
	start := time.Now()
	client := redistest.NewClient(tg.addr)
	keys, err := redistest.Keys(ctx, client, prefix)
	client.Close()
	if err != nil {
		return err
	}
	var breakerKey, budgetKey string
	for k := range keys {
		switch {
		case strings.Contains(k, "breaker") && strings.HasSuffix(k, "billing}"):
			breakerKey = k
		case strings.Contains(k, "budget"):
			budgetKey = k
		}
	}
	if breakerKey == "" {
		return fmt.Errorf("no breaker key under %s to find the master of", prefix)
	}
	victim, err := tg.cluster.MasterOf(ctx, breakerKey)
	if err != nil {
		return err
	}
	layout := []string{fmt.Sprintf("breaker %s on %s (killed)", breakerKey, victim)}
	if budgetKey != "" {
		if at, err := tg.cluster.MasterOf(ctx, budgetKey); err == nil {
			layout = append(layout, fmt.Sprintf("budget %s on %s", budgetKey, at))
		}
	}
	m.layout = strings.Join(layout, "; ")
	time.Sleep(time.Until(start.Add(length / 3)))
	m.redisAt[0] = time.Now()
	tg.cluster.Node(victim).Kill()
	promoted, err := tg.cluster.WaitPromoted(victim, 60*time.Second)
	if err != nil {
		return err
	}
	m.redisAt[1] = promoted
	end := start.Add(length)
	if after := promoted.Add(3 * time.Second); after.After(end) {
		end = after
	}
	time.Sleep(time.Until(end))
	return tg.cluster.Node(victim).Restart() // it rejoins as a replica
}

// checkKeys counts the keys of the run in Redis and those without a TTL,
// and deletes them.
func checkKeys(ctx context.Context, addr, prefix string, m *modeRun) error {
	client := redistest.NewClient(addr)
	defer client.Close()
	keys, err := redistest.Keys(ctx, client, prefix)
	if err != nil {
		return err
	}
	m.keys = len(keys)
	for k, ttl := range keys {
		if ttl < 0 {
			m.noTTL++
		}
		client.Del(ctx, k)
	}
	return nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
