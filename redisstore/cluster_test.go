package redisstore_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// ownCluster starts a Redis Cluster of the test's own (3 masters with a
// replica each), killed when t ends.
func ownCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	cl, err := redistest.StartCluster(nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, redistest.HowToStart)
	}
	t.Cleanup(cl.Close)
	return cl
}

// breakerOn returns the breaker of r's store for the first dependency
// "dep-N" whose state lives on a master for which on is true.
func breakerOn(t *testing.T, cl *redistest.Cluster, r *replica, on func(master string) bool) (*redisstore.Breaker, string) {
	t.Helper()
	for i := range 100 {
		dep := fmt.Sprintf("dep-%d", i)
		b, err := r.store.NewBreaker(dep, policy.Breaker{FailureThreshold: 100, Delay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		m, err := cl.MasterOf(background, redisstore.BreakerKey(b))
		if err != nil {
			t.Fatal(err)
		}
		if on(m) {
			return b, m
		}
	}
	t.Fatal("no dependency of 100 has its state on the master wanted")
	return nil, ""
}

func TestOnAClusterOfItsOwn(t *testing.T) {
	cl := ownCluster(t)
	masters, err := cl.Masters(background)
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters %v, %v", masters, err)
	}

	// Regression (issue 33: a single-node client pointed at a cluster
	// degraded silently, 1.74 wasted round trips per call, every decision
	// local, no warning): the first MOVED puts the Store out of use with one
	// WARN that names the fix, and nothing more is sent.
	t.Run("a client of one node is refused once, with the fix", func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		t.Cleanup(func() { _ = mp.Shutdown(background) })
		r := newReplicas(t, masters[0], 1, redisstore.WithMeterProvider(mp), redisstore.WithTimeout(5*time.Second))[0]
		b, _ := breakerOn(t, cl, r, func(m string) bool { return m != masters[0] })
		if !b.TryAcquirePermit() {
			t.Fatal("a new breaker refused")
		}
		b.RecordFailure()
		if b.Shared() || r.store.Available() {
			t.Fatalf("after MOVED: shared %v, available %v; want local, unavailable", b.Shared(), r.store.Available())
		}
		sent := operationCount(t, reader)
		err := r.store.Grants().Grant(background, "refund", `{"order":"A-1"}`)
		if !errors.Is(err, redisstore.ErrUnavailable) || !strings.Contains(err.Error(), "ClusterOptions") || strings.Contains(err.Error(), "MOVED") {
			t.Errorf("Grant: %v; want ErrUnavailable naming the fix, without Redis's reply", err)
		}
		for range 50 {
			b.TryAcquirePermit()
			b.RecordFailure()
		}
		if n := operationCount(t, reader) - sent; n != 0 {
			t.Errorf("%d operations sent after the MOVED; want none", n)
		}
		warns := r.logs.lines("WARN")
		if len(warns) != 1 || !strings.Contains(warns[0], "redisstore.ClusterOptions") || r.store.Outages() != 1 {
			t.Errorf("%d warnings, %d outages; want one naming ClusterOptions:\n%s", len(warns), r.store.Outages(), r.logs)
		}
	})

	// Regression (issue 33: a slot migration put the whole store into outage
	// mode, and a raw ASK error reached a caller): while the slot of a
	// group of grants moves to another master, key by key, under calls,
	// every call succeeds (ASK followed, TRYAGAIN sent again within the
	// timeout) and no outage begins.
	t.Run("a slot moved to another master under calls is no outage", func(t *testing.T) {
		r := newReplicas(t, cl.Addrs(), 1, redisstore.WithTimeout(5*time.Second))[0]
		g := r.store.Grants()
		waiting, granted := call("refund", `{"order":"M-1"}`), call("refund", `{"order":"M-2"}`)
		if d := decide(t, g, waiting); d != approval.Pending {
			t.Fatal(d)
		}
		// The group of the waiting request: its pending order is the key.
		var key string
		for k := range mustKeys(t, r) {
			if strings.HasSuffix(k, ":pending") {
				key = k
			}
		}
		src, err := cl.MasterOf(background, key)
		if err != nil {
			t.Fatal(err)
		}
		dst := masters[0]
		if dst == src {
			dst = masters[1]
		}
		moveSlot(t, cl, key, src, dst, func() {
			if err := g.Grant(background, granted.Tool, granted.Input); err != nil {
				t.Errorf("Grant while the slot moves: %v", err)
			}
			if d, err := g.Decide(background, granted); err != nil || d != approval.Approved {
				t.Errorf("Decide while the slot moves: %v, %v", d, err)
			}
			if d, err := g.Decide(background, waiting); err != nil || d != approval.Pending {
				t.Errorf("Decide of the waiting call while the slot moves: %v, %v", d, err)
			}
		})
		if now, _ := cl.MasterOf(background, key); now != dst {
			t.Fatalf("the slot is on %s, want %s", now, dst)
		}
		if rs := requests(t, g); len(rs) != 1 || rs[0].Call.Input != waiting.Input {
			t.Errorf("requests after the move: %+v", rs)
		}
		if r.store.Outages() != 0 || len(r.logs.lines("WARN")) != 0 {
			t.Errorf("%d outages while a slot moved; want none:\n%s", r.store.Outages(), r.logs)
		}
	})

	// Regression (issue 33: a killed master took the whole store offline for
	// about 50s after its replica was promoted, 26 outages logged, and the
	// breakers on the healthy masters decided locally throughout): the
	// outage covers the killed master's keys only, is logged once, and ends
	// once its replica is promoted.
	t.Run("a killed master is an outage of its shard only, over once its replica is promoted", func(t *testing.T) {
		// A timeout shorter than a failover (at least the cluster's 3s node
		// timeout), longer than a busy machine's slowest answer.
		rs := newReplicas(t, cl.Addrs(), 2, redisstore.WithTimeout(time.Second), redisstore.WithRecheck(50*time.Millisecond))
		a0, killed := breakerOn(t, cl, rs[0], func(string) bool { return true })
		b0, _ := breakerOn(t, cl, rs[0], func(m string) bool { return m != killed })
		a1, err := rs[1].store.NewBreaker(a0.Dependency(), policy.Breaker{FailureThreshold: 100, Delay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		b1, err := rs[1].store.NewBreaker(b0.Dependency(), policy.Breaker{FailureThreshold: 100, Delay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			waitSignal(t, redisstore.Subscribed(r.store), fmt.Sprintf("replica %d to subscribe", i))
		}
		fail := func(b *redisstore.Breaker) {
			b.TryAcquirePermit()
			b.RecordFailure()
		}
		for _, b := range []*redisstore.Breaker{a0, b0, a1, b1} {
			fail(b)
		}
		if f := b1.Metrics().Failures(); f != 2 {
			t.Fatalf("the fleet's failures of %s before the kill: %d, want 2", b1.Dependency(), f)
		}

		cl.Node(killed).Kill()
		defer func() {
			// It rejoins as a replica: the clients' pools that probe it
			// in the background stop.
			if err := cl.Node(killed).Restart(); err != nil {
				t.Error(err)
			}
		}()
		fail(a0)
		fail(a1)
		if a0.Shared() || a1.Shared() {
			t.Fatalf("%s, on the killed master, shared: %v and %v", a0.Dependency(), a0.Shared(), a1.Shared())
		}
		// The healthy masters' breakers go on sharing: each replica's
		// failure counts for the fleet.
		fail(b0)
		fail(b1)
		if !b0.Shared() || !b1.Shared() || b1.Metrics().Failures() != 4 {
			t.Errorf("%s on a healthy master: shared %v and %v, %d fleet failures; want shared, 4", b0.Dependency(), b0.Shared(), b1.Shared(), b1.Metrics().Failures())
		}
		if _, err := cl.WaitPromoted(killed, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			r.logs.waitFor(t, "INFO", "answers again")
			b := []*redisstore.Breaker{a0, a1}[i]
			fail(b)
			if !b.Shared() || !r.store.Available() {
				t.Errorf("replica %d after the promotion: shared %v, available %v; want both", i, b.Shared(), r.store.Available())
			}
			if n := len(r.logs.lines("WARN")); n != 1 || r.store.Outages() != 1 {
				t.Errorf("replica %d: %d warnings, %d outages; want 1 and 1:\n%s", i, n, r.store.Outages(), r.logs)
			}
		}
	})
}

func mustKeys(t *testing.T, r *replica) map[string]time.Duration {
	t.Helper()
	keys, err := redistest.Keys(background, r.client, r.prefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// moveSlot moves key's slot from the master src to dst as redis-cli
// --cluster reshard does (importing, migrating, each key MIGRATEd, then the
// slot given to dst), calling op in a loop on another goroutine
// throughout: one begins after each step.
func moveSlot(t *testing.T, cl *redistest.Cluster, key, src, dst string, op func()) {
	t.Helper()
	from, to := redis.NewClient(&redis.Options{Addr: src}), redis.NewClient(&redis.Options{Addr: dst})
	defer from.Close()
	defer to.Close()
	id := func(c *redis.Client) string {
		v, err := c.Do(background, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	srcID, dstID := id(from), id(to)
	slot, err := from.ClusterKeySlot(background, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	began := make(chan struct{}, 1)
	var running atomic.Bool
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			running.Store(true)
			select {
			case began <- struct{}{}:
			default:
			}
			op()
			running.Store(false)
		}
	}()
	// next returns once an op runs after the step just made: one that was
	// running (it may wait, TRYAGAIN, for the next steps while the keys are
	// split, so the steps do not wait for it to end), or the next to begin.
	next := func() {
		select {
		case <-began:
		default:
		}
		if !running.Load() {
			<-began
		}
	}
	step := func(c *redis.Client, args ...any) {
		t.Helper()
		if err := c.Do(background, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		next()
	}
	step(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	step(from, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	keys, err := from.ClusterGetKeysInSlot(background, int(slot), 1000).Result()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(dst, ":")
	for _, k := range keys {
		if err := from.Migrate(background, host, port, k, 0, 5*time.Second).Err(); err != nil && !strings.Contains(err.Error(), "NOKEY") {
			t.Fatalf("MIGRATE %s: %v", k, err)
		}
		next()
	}
	for _, c := range []*redis.Client{to, from} {
		step(c, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
	}
	close(stop)
	<-done
	_ = cl
}
