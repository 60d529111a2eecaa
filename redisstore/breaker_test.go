package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

// breakers returns the breaker of dependency "billing" with b in each
// replica.
func breakers(t *testing.T, rs []*replica, b policy.Breaker) []*redisstore.Breaker {
	t.Helper()
	out := make([]*redisstore.Breaker, len(rs))
	for i, r := range rs {
		br, err := r.store.NewBreaker("billing", b)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = br
		waitSignal(t, redisstore.Subscribed(r.store), "the store to subscribe to the breakers' changes")
	}
	return out
}

func TestBreakerOpensOnTheFleetsFailures(t *testing.T) {
	rs := newReplicas(t, redisAddr, 3)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 3, Delay: time.Minute})
	opened := waitOpen(bs[:2])

	// One failure on each replica: three in a row for the fleet. A breaker
	// of each replica's own would have seen one.
	for i, b := range bs {
		if !b.TryAcquirePermit() {
			t.Fatalf("replica %d: no permit from a closed breaker", i)
		}
		b.RecordFailure()
	}
	if !bs[2].IsOpen() {
		t.Fatalf("the replica that recorded the third failure sees %v, not open", bs[2].State())
	}
	// The other two learn it from the change the script published.
	for i, ch := range opened {
		waitSignal(t, ch, fmt.Sprintf("replica %d to learn that the breaker opened", i))
	}
	for i, b := range bs {
		if b.TryAcquirePermit() {
			t.Errorf("replica %d got a permit from the open breaker", i)
		}
		if !b.IsOpen() {
			t.Errorf("replica %d sees %v, not open", i, b.State())
		}
		if d := b.RemainingDelay(); d <= 58*time.Second || d > time.Minute {
			t.Errorf("replica %d: remaining delay %v, want just under 1m", i, d)
		}
		if !b.Shared() {
			t.Errorf("replica %d decided locally with Redis up", i)
		}
	}
}

// waitOpen returns, for each breaker, a channel closed once it takes in a
// published change that opened it.
func waitOpen(bs []*redisstore.Breaker) []chan struct{} {
	out := make([]chan struct{}, len(bs))
	for i, b := range bs {
		ch := make(chan struct{})
		var once sync.Once
		redisstore.OnChange(b, func(st circuitbreaker.State) {
			if st == circuitbreaker.OpenState {
				once.Do(func() { close(ch) })
			}
		})
		out[i] = ch
	}
	return out
}

// waitSignal waits for ch to be closed, and fails t after 10s.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10s for %s", what)
	}
}

func TestBreakerSuccessEndsARunOfFailures(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 3, Delay: time.Minute})
	for i, outcome := range []bool{false, false, true, false, false} {
		b := bs[i%2]
		b.TryAcquirePermit()
		if outcome {
			b.RecordSuccess()
		} else {
			b.RecordFailure()
		}
	}
	if !bs[0].IsClosed() || !bs[1].TryAcquirePermit() {
		t.Fatalf("F F S F F opened a breaker of 3 failures in a row: %v", bs[1].State())
	}
	bs[1].RecordFailure()
	if !bs[1].IsOpen() {
		t.Fatalf("the third failure in a row left it %v", bs[1].State())
	}
	if got := bs[0].Metrics(); got == nil {
		t.Fatal("no metrics")
	}
}

func TestBreakerWindowCountsFailuresAmongTheLastAttempts(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 2, Window: 4, Delay: time.Minute})
	bs[0].TryAcquirePermit()
	bs[0].RecordFailure()
	bs[1].TryAcquirePermit()
	bs[1].RecordSuccess()
	if m := bs[1].Metrics(); m.Failures() != 1 || m.Executions() != 2 {
		t.Errorf("metrics after F S: %d failures of %d, want 1 of 2", m.Failures(), m.Executions())
	}
	if !bs[1].IsClosed() {
		t.Fatalf("one failure of 2 opened it: %v", bs[1].State())
	}
	bs[1].TryAcquirePermit()
	bs[1].RecordFailure()
	if !bs[1].IsOpen() {
		t.Fatalf("2 failures among the last 3 attempts left it %v", bs[1].State())
	}
}

// openBreaker opens the fleet's breaker through b and waits for its delay
// to pass, so the next permit turns it half-open.
func openBreaker(t *testing.T, b *redisstore.Breaker, delay time.Duration) {
	t.Helper()
	b.Open()
	if !b.IsOpen() {
		t.Fatalf("Open left it %v", b.State())
	}
	time.Sleep(delay) // the breaker's own delay: there is nothing to wait on but time
}

func TestBreakerHalfOpenProbesAreBoundedFleetWide(t *testing.T) {
	const delay = 100 * time.Millisecond
	rs := newReplicas(t, redisAddr, 3)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: delay, Probes: 2})
	openBreaker(t, bs[0], delay)

	// 30 callers on 3 replicas ask at once: 2 get a probe permit.
	var (
		wg      sync.WaitGroup
		granted [3]atomic.Int32
		start   = make(chan struct{})
	)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if bs[i%3].TryAcquirePermit() {
				granted[i%3].Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	var holders []int
	for i := range granted {
		for range granted[i].Load() {
			holders = append(holders, i)
		}
	}
	if len(holders) != 2 {
		t.Fatalf("%d probe permits granted fleet-wide, want 2 (Probes)", len(holders))
	}
	for i, b := range bs {
		if !b.IsHalfOpen() && granted[i].Load() > 0 {
			t.Errorf("replica %d holds a probe permit and sees %v", i, b.State())
		}
	}

	// One probe succeeds: its permit goes back, and a third probe may run;
	// still at most 2 at once.
	bs[holders[0]].RecordSuccess()
	other := (holders[1] + 1) % 3
	if !bs[other].TryAcquirePermit() {
		t.Fatal("no permit after a probe gave its own back")
	}
	if bs[(other+1)%3].TryAcquirePermit() {
		t.Fatal("a third probe at once")
	}
	// The second success closes it for everyone.
	bs[holders[1]].RecordSuccess()
	if !bs[holders[1]].IsClosed() {
		t.Fatalf("2 successful probes of 2 left it %v", bs[holders[1]].State())
	}
	bs[other].RecordSuccess() // a probe that finished after the close counts as a closed success
	for i, b := range bs {
		if !b.TryAcquirePermit() || !b.IsClosed() {
			t.Errorf("replica %d sees %v after the probes closed it", i, b.State())
		}
		b.RecordSuccess()
	}
}

func TestBreakerFailedProbeOpensItAgain(t *testing.T) {
	const delay = 100 * time.Millisecond
	rs := newReplicas(t, redisAddr, 2)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: delay})
	openBreaker(t, bs[0], delay)
	if !bs[0].TryAcquirePermit() {
		t.Fatal("no probe permit after the delay")
	}
	bs[0].RecordFailure()
	if bs[1].TryAcquirePermit() || !bs[1].IsOpen() {
		t.Fatalf("after a failed probe the other replica sees %v", bs[1].State())
	}
}

func TestBreakerLostPermitExpires(t *testing.T) {
	const delay, ttl = 50 * time.Millisecond, 200 * time.Millisecond
	rs := newReplicas(t, redisAddr, 2, redisstore.WithPermitTTL(ttl))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: delay})
	openBreaker(t, bs[0], delay)
	if !bs[0].TryAcquirePermit() {
		t.Fatal("no probe permit after the delay")
	}
	// Replica 0 dies holding its permit: it never records the outcome.
	if bs[1].TryAcquirePermit() {
		t.Fatal("a second probe while the first permit is out")
	}
	time.Sleep(ttl) // the permit's TTL
	if !bs[1].TryAcquirePermit() {
		t.Fatal("the lost permit did not expire: the breaker is wedged half-open")
	}
	bs[1].RecordSuccess()
	if !bs[1].IsClosed() {
		t.Fatalf("the probe's success left it %v", bs[1].State())
	}
}

// Regression: a probe its caller canceled left its permit to be reused by
// the next attempt of the same replica, without Redis; once the permit
// expired in Redis, another replica probed too: two probes at once with
// Probes: 1. The permit now goes back to the fleet when the tool returns.
func TestACancelledProbeGivesItsPermitBackToTheFleet(t *testing.T) {
	const delay = 50 * time.Millisecond
	rs := newReplicas(t, redisAddr, 2)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 1, Delay: delay, Probes: 1})
	running := make(chan struct{})
	probe, err := toolsafe.New(middleware.Func("fetch_invoice", "", func(ctx context.Context, _ string) (string, error) {
		close(running)
		<-ctx.Done()
		return "", ctx.Err()
	}), toolsafe.WithCircuitBreaker(policy.FromCircuitBreaker("billing", bs[0])))
	if err != nil {
		t.Fatal(err)
	}
	openBreaker(t, bs[0], delay)
	ctx, cancel := context.WithCancel(background)
	done := make(chan middleware.Result)
	go func() { done <- probe.Run(ctx, `{}`) }()
	<-running // the probe is at the dependency
	if bs[1].TryAcquirePermit() {
		t.Fatal("a second probe while the first is at the dependency")
	}
	cancel()
	if r := <-done; r.Kind() != middleware.KindCanceled {
		t.Fatalf("the canceled probe: %v", r.Kind())
	}
	if !bs[1].TryAcquirePermit() {
		t.Fatal("the canceled probe's permit did not go back to the fleet")
	}
	if bs[0].TryAcquirePermit() {
		t.Fatal("replica 0 probes too, while replica 1's probe is out")
	}
	bs[1].RecordSuccess()
	if !bs[1].IsClosed() {
		t.Fatalf("the probe's success left it %v", bs[1].State())
	}
}

func TestBreakerCountsWhatToolsafeCounts(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	var opened []chan struct{}
	wrap := func(r *replica, fail func(ctx context.Context) error) (*toolsafe.Tool, *atomic.Int32) {
		cb, err := r.store.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		opened = append(opened, waitOpen([]*redisstore.Breaker{cb.CircuitBreaker.(*redisstore.Breaker)})...)
		waitSignal(t, redisstore.Subscribed(r.store), "the store to subscribe to the breakers' changes")
		var calls atomic.Int32
		tool := middleware.Func("fetch_invoice", "fetches an invoice", func(ctx context.Context, _ string) (string, error) {
			calls.Add(1)
			return "", fail(ctx)
		})
		w, err := toolsafe.New(tool, toolsafe.WithCircuitBreaker(cb))
		if err != nil {
			t.Fatal(err)
		}
		return w, &calls
	}
	var mode atomic.Value
	mode.Store("tool-error")
	running := make(chan struct{}, 1)
	fail := func(ctx context.Context) error {
		switch mode.Load() {
		case "tool-error":
			return middleware.NewToolError("no invoice INV-9")
		case "cancel":
			running <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return middleware.Transient(errors.New("billing API busy"))
	}
	a, aCalls := wrap(rs[0], fail)
	b, _ := wrap(rs[1], fail)
	aOpened := opened[0]

	for range 5 {
		if r := a.Run(background, `{"number":"INV-9"}`); r.Failure == nil || r.Failure.Kind != middleware.KindToolError {
			t.Fatalf("tool-error call: %+v", r)
		}
	}
	mode.Store("cancel")
	ctx, cancel := context.WithCancel(background)
	done := make(chan middleware.Result)
	go func() { done <- a.Run(ctx, `{}`) }()
	<-running // the tool is running: its caller gives up
	cancel()
	if r := <-done; r.Failure == nil || r.Failure.Kind != middleware.KindCanceled {
		t.Fatalf("cancelled call: %+v", r)
	}
	mode.Store("transient")
	if r := a.Run(background, `{}`); r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
		t.Fatalf("failing call: %+v", r)
	}
	// Five tool-errors and a cancellation counted nothing: this is the
	// second failure in a row, on the other replica.
	if r := b.Run(background, `{}`); r.Failure == nil || r.Failure.Kind != middleware.KindFailed {
		t.Fatalf("failing call on b: %+v", r)
	}
	waitSignal(t, aOpened, "replica a to learn that the breaker opened")
	before := aCalls.Load()
	r := a.Run(background, `{}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindCircuitOpen {
		t.Fatalf("after 2 failures fleet-wide: %+v, want circuit-open", r)
	}
	if aCalls.Load() != before {
		t.Error("the open breaker let the tool be called")
	}
}

func TestBreakerDecidesLocallyWhileRedisIsDown(t *testing.T) {
	srv := ownServer(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(background) })
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithRecheck(20*time.Millisecond), redisstore.WithMeterProvider(mp))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
	opened := waitOpen(bs[:1])
	for _, b := range bs {
		b.TryAcquirePermit()
		b.RecordFailure()
	}
	waitSignal(t, opened[0], "replica 0 to learn that the breaker opened")
	if bs[0].TryAcquirePermit() {
		t.Fatal("the fleet's breaker did not open")
	}

	srv.Kill()
	// The subscription to the breakers' changes breaks: the outage is
	// noticed before any call needs Redis.
	rs[0].logs.waitFor(t, "WARN", "redis is unavailable")
	for i := range 100 {
		start := time.Now()
		if bs[0].TryAcquirePermit() {
			t.Fatalf("permit %d: the local breaker, started from the fleet's open state, gave a permit", i)
		}
		if d := time.Since(start); d > time.Second { // it never waits for a dead Redis: far less than this on any machine
			t.Errorf("permit %d took %v with Redis down", i, d)
		}
	}
	if bs[0].Shared() || rs[0].store.Available() {
		t.Error("the breaker says it used Redis while Redis was down")
	}
	if !bs[0].IsOpen() || bs[0].RemainingDelay() <= 0 {
		t.Errorf("the local breaker is %v with %v left, want open", bs[0].State(), bs[0].RemainingDelay())
	}
	// Replica 1 learned the fleet's state before the outage too.
	rs[1].logs.waitFor(t, "WARN", "redis is unavailable")
	if bs[1].TryAcquirePermit() || bs[1].Shared() {
		t.Error("replica 1's local breaker, started from the fleet's open state, gave a permit")
	}
	if got := rs[0].logs.lines("WARN"); len(got) != 1 {
		t.Errorf("the outage was logged %d times at WARN, want once:\n%s", len(got), rs[0].logs)
	}
	for _, line := range rs[0].logs.lines("WARN") {
		if strings.Contains(line, "error=") || strings.Contains(line, "refused") {
			t.Errorf("the WARN line holds the error's text: %s", line)
		}
	}
	rs[0].logs.waitFor(t, "DEBUG", "error=") // the error's text, at DEBUG only

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	if !bs[0].TryAcquirePermit() || !bs[0].Shared() {
		t.Fatal("after Redis returned (empty) the breaker did not use the fleet's state again")
	}
	bs[0].RecordSuccess()
	if !bs[0].IsClosed() {
		t.Errorf("a restarted, empty Redis holds a closed breaker; the replica sees %v", bs[0].State())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(background, &rm); err != nil {
		t.Fatal(err)
	}
	sums := counters(rm)
	if sums["toolsafe.redisstore.outages"] != 2 || sums["toolsafe.redisstore.recoveries"] < 1 || sums["toolsafe.redisstore.local_decisions"] < 100 {
		t.Errorf("metrics %v: want 2 outages (one per replica's store), a recovery, 100 local decisions at least", sums)
	}
}

func TestBreakerGivesUpOnASlowRedisWithinItsTimeout(t *testing.T) {
	srv := ownServer(t)
	const timeout = 30 * time.Millisecond
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithTimeout(timeout), redisstore.WithRecheck(20*time.Millisecond))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
	if !bs[0].TryAcquirePermit() {
		t.Fatal("no permit from a closed breaker")
	}
	bs[0].RecordSuccess()

	srv.Pause()
	// A failure is always sent to Redis: it waits for the timeout, no more.
	start := time.Now()
	bs[0].RecordFailure()
	if d := time.Since(start); d > timeout+50*time.Millisecond {
		t.Errorf("recording a failure took %v with Redis paused; the timeout is %v", d, timeout)
	}
	if bs[0].Shared() || rs[0].store.Available() {
		t.Error("Redis paused past the timeout is still counted available")
	}
	if !bs[0].TryAcquirePermit() {
		t.Error("the local breaker, started closed with one failure of 2, refused")
	}
	start = time.Now()
	for range 10 {
		bs[0].TryAcquirePermit()
		bs[0].RecordSuccess()
	}
	if d := time.Since(start); d > 5*timeout { // waiting for Redis, they would take 10 timeouts at least
		t.Errorf("10 attempts took %v once Redis was known to be down: they waited for it", d)
	}
	srv.Resume()
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	if !bs[0].TryAcquirePermit() || !bs[0].Shared() {
		t.Error("the breaker did not share again once Redis answered")
	}
}

func TestBreakerIsAFailsafePolicyToo(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
	exec := failsafe.With[string](bs[0])
	boom := errors.New("boom")
	for range 2 {
		if _, err := exec.Get(func() (string, error) { return "", boom }); !errors.Is(err, boom) {
			t.Fatalf("got %v, want boom", err)
		}
	}
	ran := false
	if _, err := exec.Get(func() (string, error) { ran = true; return "ok", nil }); !errors.Is(err, circuitbreaker.ErrOpen) || ran {
		t.Fatalf("got %v (ran %v), want circuitbreaker.ErrOpen without running", err, ran)
	}
}

func TestBreakerRefusesWhatCannotWork(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	for _, c := range []struct {
		name, dep string
		b         policy.Breaker
	}{
		{"no dependency", "", policy.Breaker{}},
		{"a window smaller than the failures", "billing", policy.Breaker{FailureThreshold: 5, Window: 3}},
		{"a window too large", "billing", policy.Breaker{FailureThreshold: 5, Window: redisstore.MaxBreakerWindow + 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := rs[0].store.CircuitBreaker(c.dep, c.b); err == nil {
				t.Error("no error")
			}
		})
	}
}

func counters(rm metricdata.ResourceMetrics) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != redisstore.ScopeName {
			continue
		}
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

func TestAFlapAfterAnOutageIsNotASecondOutage(t *testing.T) {
	srv := ownServer(t)
	// A flap is a failure within one recheck of Redis answering again, and
	// a restart of redis-server must fit in it: 2s leaves room for a busy
	// machine.
	const recheck = 2 * time.Second
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(recheck))
	logs := rs[0].logs
	if _, err := rs[0].store.NewBreaker("billing", policy.Breaker{}); err != nil {
		t.Fatal(err) // its subscription notices the outages
	}
	restart := func() {
		t.Helper()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	}

	srv.Kill()
	logs.waitFor(t, "WARN", "redis is unavailable")
	restart()
	logs.waitFor(t, "INFO", "redis answers again")
	// Redis fails again at once, and answers the next recheck: a flap.
	srv.Kill()
	logs.waitFor(t, "DEBUG", "failed again just after it answered")
	restart()
	logs.waitFor(t, "DEBUG", "redis answers again")
	if n := len(logs.lines("WARN")); n != 1 || rs[0].store.Outages() != 1 {
		t.Fatalf("%d warnings, %d outages after an outage and a flap; want 1 and 1:\n%s", n, rs[0].store.Outages(), logs)
	}
	// It fails again at once and stays down past the recheck: an outage.
	srv.Kill()
	logs.waitFor(t, "WARN", "outage=2")
	restart()
	logs.waitFor(t, "INFO", "outage=2")
}

// Regression (replicas disagree after Redis loses an open breaker's
// keys): after a FLUSHALL, the replica that saw the breaker open kept it
// open for its whole delay without asking Redis, while a fresh replica saw
// it closed. An open breaker is refreshed on the max-age schedule of a
// closed one, so it learns within the max age that the keys are gone.
func TestAnOpenBreakerLearnsThatRedisLostItsKeys(t *testing.T) {
	const maxAge = 100 * time.Millisecond
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithStateMaxAge(maxAge))
	bs := breakers(t, rs[:1], policy.Breaker{FailureThreshold: 1, Delay: time.Hour})
	bs[0].Open()
	if bs[0].TryAcquirePermit() {
		t.Fatal("a permit from the breaker it just opened")
	}
	if err := rs[0].client.FlushAll(background).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := breakers(t, rs[1:], policy.Breaker{FailureThreshold: 1, Delay: time.Hour})[0]
	if !fresh.TryAcquirePermit() {
		t.Fatal("a fresh replica finds the breaker open after Redis lost it")
	}
	fresh.RecordSuccess()
	// Nothing signals that time has passed: poll, well within the hour
	// the breaker would otherwise stay open.
	deadline := time.Now().Add(10 * time.Second)
	for !bs[0].TryAcquirePermit() {
		if time.Now().After(deadline) {
			t.Fatalf("the replica that saw it open still refuses after 10s (max age %v): %v", maxAge, bs[0].State())
		}
		time.Sleep(maxAge / 10)
	}
	bs[0].RecordSuccess()
	if !bs[0].IsClosed() {
		t.Errorf("%v; want closed, as the fleet's is", bs[0].State())
	}
}
