// Command operators is the demo behind toolsafe's operator files (deploy/):
// agents call a billing upstream on 127.0.0.1 through toolsafe's retries,
// circuit breaker, bulkhead, call limits and approvals, and serve their
// metrics on /metrics through the OpenTelemetry Prometheus exporter, while
// a storm takes the upstream down and brings it back:
//
//	go run -C examples/operators . -listen 127.0.0.1:9464 -storm 20s,3m,1m
//
// -storm gives the phases: up, down, up again (the demo then exits). With
// -storm "" it runs, upstream up, until interrupted. With -redis ADDR the
// breaker, the retry budget and the grants are a fleet's, shared through
// that Redis (package redisstore), and the fleet's gauges are served too. Point a Prometheus at
// it with deploy/prometheus/rules.yml (scripts/e2e-prometheus.sh does) and
// the breaker gauge goes open, the breaker alert fires, and clears once the
// upstream is back. Only loopback traffic is made.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9464", "where /metrics is served")
	storm := flag.String("storm", "20s,3m,1m", "the phases: upstream up, down, up again; empty to run until interrupted")
	agents := flag.Int("agents", 8, "agents calling fetch_invoice at once")
	redisAddr := flag.String("redis", "", "a Redis (host:port) to share the breaker, the retry budget and the grants through, as a fleet would; empty for none")
	flag.Parse()
	if err := runDemo(*listen, *storm, *redisAddr, *agents); err != nil {
		fmt.Fprintln(os.Stderr, "operators:", err)
		os.Exit(1)
	}
}

func runDemo(listen, storm, redisAddr string, agents int) error {
	phases, err := parsePhases(storm)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d, err := newDemo(listen, redisAddr, "toolsafe-demo")
	if err != nil {
		return err
	}
	fmt.Printf("metrics on http://%s/metrics\n", d.addr)
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.agents(actx, agents, 100*time.Millisecond)
	}()
	for i, p := range phases {
		d.down(i == 1)
		fmt.Printf("%s upstream %s for %v\n", time.Now().UTC().Format(time.TimeOnly), map[bool]string{true: "down", false: "up"}[i == 1], p)
		select {
		case <-ctx.Done():
		case <-time.After(p):
		}
	}
	if len(phases) == 0 {
		<-ctx.Done()
	}
	cancel()
	<-done
	return d.close()
}

// parsePhases reads "20s,3m,1m": the durations of the phases up, down, up.
func parsePhases(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("-storm %q: give three durations, up,down,up, such as 20s,3m,1m", s)
	}
	var out []time.Duration
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-storm %q: %q is not a positive duration such as 20s", s, p)
		}
		out = append(out, d)
	}
	return out, nil
}
