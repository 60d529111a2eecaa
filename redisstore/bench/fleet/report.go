package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one phase of one mode, fleet-wide.
type row struct {
	phase, mode        string
	calls, retries     int
	requests, probes   int
	lost, late         int
	reached            time.Duration // until every replica refused (down) or answered (back); -1: not every one did
	p50, p99           time.Duration // overhead per attempt
	redis50, redis99   time.Duration // what Redis adds: shared overhead minus local
	hasRedis, measured bool
	outcomes           map[string]int
	slowest            time.Duration
}

func (r row) perCall() float64 {
	if r.calls == 0 {
		return 0
	}
	return float64(r.requests) / float64(r.calls)
}

// quantile returns the nearest-rank q-quantile of sorted ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func rowOf(m *modeRun, ph int) row {
	r := row{phase: phaseNames[ph], mode: "local", requests: m.requests[ph], probes: m.probes[ph], lost: m.lost[ph], outcomes: map[string]int{}}
	if m.shared {
		r.mode = "shared"
	}
	if ph == phaseRedis && m.layout != "" {
		r.phase = masterKilled
	}
	var over []time.Duration
	latest := int64(0)
	every := true
	for _, rep := range m.reports {
		p := rep.Phases[ph]
		r.calls += p.Calls
		r.retries += p.Retries
		r.late += p.Late
		r.slowest = max(r.slowest, p.Slowest)
		for k, n := range p.Outcomes {
			r.outcomes[k] += n
		}
		over = append(over, p.Overhead...)
		t := p.FirstRefusal
		if ph != phaseDown {
			t = p.FirstOK
		}
		if t == 0 {
			every = false
		}
		latest = max(latest, t)
	}
	r.reached = -1
	if every && latest > 0 {
		r.reached = max(0, time.Unix(0, latest).Sub(m.starts[ph]))
	}
	slices.Sort(over)
	r.p50, r.p99, r.measured = quantile(over, 0.5), quantile(over, 0.99), len(over) > 0
	return r
}

func ms(d time.Duration) string {
	switch {
	case d < 0:
		return "never"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// report prints the table, the stores' account, the goals, and the last
// line, and returns the summary.
func report(w io.Writer, c Config, runs []*modeRun) Summary {
	var local, shared *modeRun
	for _, m := range runs {
		if m.shared {
			shared = m
		} else {
			local = m
		}
	}
	rows := tableRows(local, shared)
	printTable(w, rows)
	st := printStores(w, shared)
	s := checkGoals(w, c, rows, shared, st)
	fmt.Fprintf(w, "\nfleet: %d replicas, requests per call while down %.4f, lost %d, late %d, applied twice %d\n", c.Replicas, s.RequestsPerCallDown, s.Lost, s.Late, s.Twice)
	return s
}

// tableRows returns the rows of the table: per phase after the warm-up,
// local then shared, with what Redis adds to the local run's healthy
// overhead; the last phase (Redis killed) is shared only.
func tableRows(local, shared *modeRun) []row {
	var rows []row
	for ph := phaseDown; ph < phaseCount; ph++ {
		var lr row
		if ph <= phaseBack {
			lr = rowOf(local, ph)
			rows = append(rows, lr)
		} else {
			lr = rowOf(local, phaseBack) // the healthy phase is the baseline
		}
		sr := rowOf(shared, ph)
		sr.hasRedis = true
		sr.redis50, sr.redis99 = sr.p50-lr.p50, sr.p99-lr.p99
		rows = append(rows, sr)
	}
	return rows
}

// printTable prints rows as a table, then each row's outcomes.
func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tmode\tcalls\trequests\treq/call\tretries\tall replicas\tprobes at once\tlost\tlate\tslowest\toverhead p50\tp99\tredis adds p50\tp99\t")
	for _, r := range rows {
		reached := ms(r.reached)
		if r.phase == phaseNames[phaseDown] {
			reached = "refuse after " + reached
		} else {
			reached = "answer after " + reached
		}
		redis := "\t"
		if r.hasRedis {
			redis = ms(max(0, r.redis50)) + "\t" + ms(max(0, r.redis99))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n",
			r.phase, r.mode, r.calls, r.requests, r.perCall(), r.retries, reached,
			r.probes, r.lost, r.late, ms(r.slowest), ms(r.p50), ms(r.p99), redis)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "  %s, %s: %s\n", r.phase, r.mode, outcomeList(r.outcomes))
	}
}

// storeTotals is what the shared run's stores saw, fleet-wide.
type storeTotals struct {
	outages, warnings int64
	sharing           int           // replicas sharing again at the end
	recoveredBy       time.Duration // the last recovery after Redis was back (on a cluster, after the promotion); -1: none
}

// printStores prints what the shared run's stores saw (outages, warnings,
// recoveries, local decisions), its Redis operations and the keys it left.
func printStores(w io.Writer, shared *modeRun) storeTotals {
	var st storeTotals
	var recoveries, decidedLocally int64
	recoveredBy := time.Duration(-1)
	for _, rep := range shared.reports {
		st.outages += rep.Outages
		recoveries += rep.Recoveries
		decidedLocally += rep.Local
		st.warnings += int64(rep.Warnings)
		if rep.Shared {
			st.sharing++
		}
		if rep.Recovered > 0 && !shared.redisAt[1].IsZero() {
			recoveredBy = max(recoveredBy, time.Unix(0, rep.Recovered).Sub(shared.redisAt[1]))
		}
	}
	st.recoveredBy = recoveredBy
	back := "Redis was back"
	if shared.layout != "" {
		back = "the promotion"
		fmt.Fprintf(w, "\nslot layout: %s; the replica was promoted %s after the kill\n", shared.layout, ms(shared.redisAt[1].Sub(shared.redisAt[0])))
	}
	fmt.Fprintf(w, "\nshared stores: %d outages seen by %d replicas, %d warnings logged, %d recoveries (the last %s after %s), %d decisions taken locally meanwhile; %d of %d replicas sharing again at the end\n",
		st.outages, len(shared.reports), st.warnings, recoveries, ms(recoveredBy), back, decidedLocally, st.sharing, len(shared.reports))
	ops := map[string]int64{}
	var total int64
	for _, rep := range shared.reports {
		for k, n := range rep.Operations {
			ops[k] += n
			total += n
		}
	}
	calls := 0
	for ph := phaseWarmup; ph < phaseCount; ph++ {
		for _, rep := range shared.reports {
			calls += rep.Phases[ph].Calls
		}
	}
	var opList []string
	for _, k := range slices.Sorted(maps.Keys(ops)) {
		opList = append(opList, fmt.Sprintf("%s %d", k, ops[k]))
	}
	fmt.Fprintf(w, "redis operations: %d for %d calls (%.3f per call): %s\n", total, calls, float64(total)/float64(max(calls, 1)), strings.Join(opList, ", "))
	fmt.Fprintf(w, "redis keys left by the run: %d, %d without a TTL\n\n", shared.keys, shared.noTTL)
	return st
}

// checkGoals prints each goal, met or missed, and returns the summary.
func checkGoals(w io.Writer, c Config, rows []row, shared *modeRun, st storeTotals) Summary {
	s := Summary{}
	var lost, late int
	for _, r := range rows {
		lost += r.lost
		late += r.late
	}
	s.Lost, s.Late, s.Twice = lost, late, shared.twice
	down := rows[1] // shared, upstream down
	s.RequestsPerCallDown = down.perCall()
	record := func(speed, ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark = "MISS"
			if speed {
				s.MissedSpeed = append(s.MissedSpeed, fmt.Sprintf(format, args...))
			} else {
				s.Missed = append(s.Missed, fmt.Sprintf(format, args...))
			}
		}
		fmt.Fprintf(w, "goal %s "+format+"\n", append([]any{mark}, args...)...)
	}
	goal := func(ok bool, format string, args ...any) { record(false, ok, format, args...) }
	// A speed goal depends on the machine as much as on the code: a busy
	// machine misses it with the same code (see -check-speed).
	speedGoal := func(ok bool, format string, args ...any) { record(true, ok, format, args...) }
	goal(down.perCall() <= 1.1, "shared, upstream down: %.4f requests per logical call fleet-wide (≤ 1.1; local: %.4f)", down.perCall(), rows[0].perCall())
	mostProbes := 0
	for _, r := range rows {
		if r.mode == "shared" {
			mostProbes = max(mostProbes, r.probes)
		}
	}
	goal(uint(mostProbes) <= c.Breaker.Probes, "shared: at most %d probes at once fleet-wide in every phase (≤ Probes, %d; local: %d)", mostProbes, c.Breaker.Probes, max(rows[0].probes, rows[2].probes))
	goal(lost == 0, "%d lost results in all phases, both modes, Redis killed included (0)", lost)
	goal(late == 0, "%d late returns in all phases, both modes, Redis killed included (0)", late)
	worst := max(rows[1].redis99, rows[3].redis99)
	speedGoal(worst <= time.Millisecond, "Redis adds %s at p99 per attempt while it is up (≤ 1ms)", ms(worst))
	goal(st.warnings == st.outages && st.outages >= int64(len(shared.reports)), "every replica logged each outage once (%d warnings, %d outages)", st.warnings, st.outages)
	goal(st.sharing == len(shared.reports), "%d of %d replicas shared again once Redis was back", st.sharing, len(shared.reports))
	if shared.layout != "" {
		goal(st.recoveredBy >= 0 && st.recoveredBy <= 2*time.Second, "every replica shared again %s after the promotion (≤ 2s)", ms(st.recoveredBy))
	}
	goal(shared.twice == 0, "%d calls answered twice by the upstream, shared mode (0: none applied twice)", shared.twice)
	goal(shared.noTTL == 0, "%d keys without a TTL (0)", shared.noTTL)
	return s
}

func outcomeList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
