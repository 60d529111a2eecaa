// Command approvals measures how many approval decisions a second a fleet's
// shared grants (redisstore.Grants) take on a Redis Cluster, and what each
// costs the server, with the slot layout it used.
//
//	go run -C redisstore ./bench/approvals          # 10 s
//	go run -C redisstore ./bench/approvals -short   # 3 s, for CI
//
// It starts a Redis Cluster of its own on 127.0.0.1 (3 masters with a
// replica each, as scripts/redis-cluster.sh makes it; Debian's redis-server
// must be installed), or uses the Redis in REDIS_ADDR (several addresses,
// comma-separated, for a cluster). Workers (-workers, 32) each repeat one
// approval: a Grant of refund with an input of their own, then the Decide
// of the call that uses it (Approved). It prints the decisions a second,
// the 16 groups the grants are kept in ("{PREFIX:grants:G}"), the slot and
// master of each, the server's time per script on each master (INFO
// commandstats, reset at the start on a cluster of its own), and the
// ceiling that time sets: one master's second divided by the time a
// decision costs on the busiest master, against one slot's (all grants on
// one master, as before the groups).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

func main() {
	short := flag.Bool("short", false, "run 3s instead of 10s: for CI")
	workers := flag.Int("workers", 32, "goroutines, each granting and deciding one approval at a time")
	flag.Parse()
	length := 10 * time.Second
	if *short {
		length = 3 * time.Second
	}
	if err := run(context.Background(), length, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "approvals:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, length time.Duration, workers int) error {
	addrs := os.Getenv("REDIS_ADDR")
	own := addrs == ""
	if own {
		cl, err := redistest.StartCluster(nil)
		if err != nil {
			return err
		}
		defer cl.Close()
		addrs = cl.Addrs()
	}
	client := redistest.NewClient(addrs)
	defer client.Close()
	prefix := fmt.Sprintf("approvalsbench-%d", time.Now().UnixNano())
	store, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(time.Second))
	if err != nil {
		return err
	}
	defer store.Close()
	g := store.Grants()
	cc, cluster := client.(*redis.ClusterClient)
	if cluster && own {
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.ConfigResetStat(ctx).Err() }); err != nil {
			return err
		}
	}

	var decisions, failures atomic.Int64
	stop := time.Now().Add(length)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				input := fmt.Sprintf(`{"order":"W%d-%d"}`, w, i)
				c := approval.CallInfo{Tool: "refund", CallID: fmt.Sprintf("call_%d_%d", w, i), Input: input, Attempt: 1}
				if err := g.Grant(ctx, "refund", input); err != nil {
					failures.Add(1)
					continue
				}
				if d, err := g.Decide(ctx, c); err != nil || d != approval.Approved {
					failures.Add(1)
					continue
				}
				decisions.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	n := decisions.Load()
	fmt.Printf("approvals: %d workers for %v on %s\n", workers, length, addrs)
	fmt.Printf("  %d decisions (each a Grant, then the Decide that uses it), %d failed: %.0f decisions/s\n\n", n, failures.Load(), float64(n)/elapsed.Seconds())
	if !cluster {
		fmt.Println("  one Redis: every group on it")
		return nil
	}
	return layout(ctx, cc, prefix, n, own)
}

// layout prints the groups' slots and masters, each master's time per
// script, and the ceilings.
func layout(ctx context.Context, cc *redis.ClusterClient, prefix string, decisions int64, own bool) error {
	groups := map[string][]string{} // master → groups
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  group\tslot\tmaster")
	for i := range 16 {
		key := "{" + prefix + ":grants:" + strconv.FormatInt(int64(i), 16) + "}"
		slot, err := cc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			return err
		}
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return err
		}
		addr := m.Options().Addr
		groups[addr] = append(groups[addr], key)
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", key, slot, addr)
	}
	tw.Flush()
	fmt.Println()
	var mu sync.Mutex
	usec := map[string]float64{} // master → µs of scripts
	calls := map[string]int64{}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		info, err := n.Info(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
				continue
			}
			for _, f := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "calls":
					c, _ := strconv.ParseInt(v, 10, 64)
					mu.Lock()
					calls[n.Options().Addr] += c
					mu.Unlock()
				case "usec":
					u, _ := strconv.ParseFloat(v, 64)
					mu.Lock()
					usec[n.Options().Addr] += u
					mu.Unlock()
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !own {
		fmt.Println("  (commandstats not reset: REDIS_ADDR is not this program's; the times include earlier scripts)")
	}
	var total float64
	var busiest float64
	masters := slices.Sorted(func(yield func(string) bool) {
		for m := range groups {
			if !yield(m) {
				return
			}
		}
	})
	for _, m := range masters {
		total += usec[m]
		busiest = max(busiest, usec[m])
		per := 0.0
		if calls[m] > 0 {
			per = usec[m] / float64(calls[m])
		}
		fmt.Printf("  master %s: %d groups, %d scripts, %.1f µs each, %.0f ms of scripts in all\n", m, len(groups[m]), calls[m], per, usec[m]/1000)
	}
	if decisions == 0 || total == 0 {
		return nil
	}
	perDecision := total / float64(decisions)  // µs of server time per decision, all masters
	busiestPer := busiest / float64(decisions) // on the busiest master
	fmt.Printf("\n  server time per decision (a Grant and a Decide): %.1f µs; the busiest master's share: %.1f µs\n", perDecision, busiestPer)
	fmt.Printf("  ceiling: %.0f decisions/s across %d masters (the busiest master saturates first), against %.0f/s with every grant in one slot\n",
		1e6/busiestPer, len(masters), 1e6/perDecision)
	return nil
}
