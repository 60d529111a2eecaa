package redisstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/redisstore"
)

func TestNewRefusesWhatCannotWork(t *testing.T) {
	good := newClient(t, redisAddr)
	noCtx := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { noCtx.Close() })
	noAddr := redis.NewClusterClient(redisstore.ClusterOptions())
	t.Cleanup(func() { noAddr.Close() })
	for _, c := range []struct {
		name   string
		client redis.UniversalClient
		opts   []redisstore.Option
		want   string
	}{
		{"a nil client", nil, nil, "the client is nil"},
		{"a client that ignores contexts", noCtx, nil, "ContextTimeoutEnabled"},
		{"a cluster client with no address", noAddr, nil, "no node's address"},
		{"a negative timeout", good, []redisstore.Option{redisstore.WithTimeout(-time.Second)}, "timeout -1s is negative"},
		{"a prefix with braces", good, []redisstore.Option{redisstore.WithPrefix("a{b}")}, `prefix "a{b}"`},
		{"a window too short", good, []redisstore.Option{redisstore.WithBudgetWindow(time.Millisecond)}, "shorter than 100ms"},
		{"a negative minimum", good, []redisstore.Option{redisstore.WithBudgetMinRetries(-1)}, "negative"},
		{"negative durations", good, []redisstore.Option{redisstore.WithRecheck(-1), redisstore.WithStateTTL(-1), redisstore.WithPermitTTL(-1), redisstore.WithStateMaxAge(-1)},
			"recheck interval -1ns is negative\nstate TTL -1ns is negative\npermit TTL -1ns is negative\nstate max age -1ns is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := redisstore.New(c.client, c.opts...)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// A healthy attempt waits for no Redis operation: permits of a closed
// breaker come from the state learned under a live subscription, and a
// success that changes nothing is not sent.
func TestHealthyAttemptsCostNoRedisOperation(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(background) })
	rs := newReplicas(t, redisAddr, 1, redisstore.WithMeterProvider(mp))
	bs := breakers(t, rs, policy.Breaker{FailureThreshold: 3, Delay: time.Minute})
	// A state is learned, then a change under the live subscription.
	if !bs[0].TryAcquirePermit() {
		t.Fatal("a new breaker refused")
	}
	bs[0].RecordSuccess()
	opened := waitOpen(bs)
	bs[0].Open()
	waitSignal(t, opened[0], "the breaker to learn its own change")
	bs[0].Close()
	if !bs[0].TryAcquirePermit() || !bs[0].IsClosed() {
		t.Fatal("closed by hand, it refuses")
	}
	bs[0].RecordSuccess()
	before := operationCount(t, reader)
	for range 200 {
		if !bs[0].TryAcquirePermit() {
			t.Fatal("a closed breaker refused")
		}
		bs[0].RecordSuccess()
	}
	if n := operationCount(t, reader) - before; n > 2 { // a background refresh may run
		t.Errorf("200 healthy attempts made %d Redis operations", n)
	}
}

func operationCount(t *testing.T, reader *sdkmetric.ManualReader) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(background, &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "toolsafe.redisstore.operation.duration" {
				for _, dp := range h.DataPoints {
					n += dp.Count
				}
			}
		}
	}
	return n
}
