package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

// A Redis that answers nothing (SIGSTOP) must not hold a scrape for long.
func TestScrapeOnAPausedRedis(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	budget, err := rs[0].store.NewBudget("billing", 0.2)
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	hook := otelhook.New(otelhook.WithMeterProvider(mp))
	reg, err := hook.Observe(otelhook.Gauges{
		Breakers:  []otelhook.Breaker{bs[0]},
		Approvals: []otelhook.Approvals{rs[0].store.Grants()},
		Stores:    []otelhook.FleetStore{rs[0].store},
		Budgets:   []otelhook.RetryBudget{budget},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Unregister() })
	gauges(t, reader)
	srv.Pause()
	t.Cleanup(srv.Resume)
	start := time.Now()
	g := gauges(t, reader)
	took := time.Since(start)
	t.Logf("scrape on a paused Redis took %v: %v", took, g)
	if took > time.Second {
		t.Errorf("a scrape on a paused Redis took %v", took)
	}
	if g["toolsafe.fleet_store.up{}"] != 0 {
		t.Errorf("up = %v after a scrape that found Redis paused", g["toolsafe.fleet_store.up{}"])
	}
}

// The backlog gauge counts what waits in Redis, not the newest MaxPending
// the inbox lists: the oldest request is what ToolsafeApprovalsWaitingTooLong
// is about.
func TestBacklogBeyondMaxPending(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	ctx := context.Background()
	g := rs[0].store.Grants()
	g.MaxPending = 2
	for i := range 12 {
		if _, err := g.Decide(ctx, approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"order":"A-%d"}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	backlog, err := g.Backlog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := rs[0].store.Grants() // the default cap lists them all
	every, err := all.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Backlog with MaxPending 2: %+v; requests waiting in Redis: %d", backlog, len(every))
	if len(backlog) != 1 || backlog[0].Requests != len(every) {
		t.Errorf("the backlog gauge would read %+v, but %d requests wait in Redis", backlog, len(every))
	}
}

// A replica that makes no call and observes only its Store learns at its
// next scrape that Redis is gone: the up gauge pings the Store, whose
// outage begins, and reads 1 again once the recheck finds Redis back.
func TestFleetStoreUpOnAnIdleReplica(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	hook := otelhook.New(otelhook.WithMeterProvider(mp))
	reg, err := hook.Observe(otelhook.Gauges{Stores: []otelhook.FleetStore{rs[0].store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Unregister() })
	if up := gauges(t, reader)["toolsafe.fleet_store.up{}"]; up != 1 {
		t.Fatalf("up = %v while Redis answers; want 1", up)
	}
	outages := rs[0].store.Outages()
	srv.Kill()
	t.Cleanup(func() { _ = srv.Restart() })
	if up := gauges(t, reader)["toolsafe.fleet_store.up{}"]; up != 0 {
		t.Fatalf("up = %v at the first scrape after Redis was killed, no call made; want 0", up)
	}
	if n := rs[0].store.Outages(); n != outages+1 {
		t.Errorf("%d outages began; want the one the scrape found", n-outages)
	}
	if err := rs[0].store.Ping(context.Background()); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Ping during the outage: %v; want ErrUnavailable", err)
	}
}
