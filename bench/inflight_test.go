package bench

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// BenchmarkInflight is the memory one call holds while its tool is blocked
// inside an attempt: b.N calls block at once, and the heap and stacks they
// hold, divided by b.N, is reported as bytes/call. failsafe-go's retry and
// (cooperative) timeout is the yardstick.
func BenchmarkInflight(b *testing.B) {
	for _, name := range []string{"failsafe", "toolsafe"} {
		b.Run(name, func(b *testing.B) {
			release := make(chan struct{})
			var started sync.WaitGroup
			blocked := middleware.Func("bench", "", func(ctx context.Context, _ string) (string, error) {
				started.Done()
				<-release
				return "ok", nil
			})
			var call func() (string, error)
			switch name {
			case "failsafe":
				exec := failsafe.With[string](retrypolicy.NewBuilder[string]().WithMaxRetries(maxRetries).Build(),
					timeout.New[string](time.Hour))
				call = func() (string, error) {
					return exec.WithContext(context.Background()).GetWithExecution(func(e failsafe.Execution[string]) (string, error) {
						return blocked.Call(e.Context(), "x")
					})
				}
			default:
				w := toolsafe.Wrap(blocked, toolsafe.WithRetry(policy.Retry{MaxRetries: maxRetries, Backoff: policy.Constant(0)}),
					toolsafe.WithTimeout(time.Hour, 1<<20))
				call = func() (string, error) { return w.Call(context.Background(), "x") }
			}
			var done sync.WaitGroup
			before := inUse()
			b.ResetTimer()
			started.Add(b.N)
			done.Add(b.N)
			for range b.N {
				go func() { defer done.Done(); _, _ = call() }()
			}
			started.Wait()
			b.StopTimer()
			held := inUse() - before
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.StackInuse)/float64(b.N), "stack/call")
			close(release)
			done.Wait()
			b.ReportMetric(float64(held)/float64(b.N), "bytes/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// inUse is the heap and goroutine stacks in use, after a collection.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// BenchmarkHardTimeout is how late the caller gets control back from a tool
// that ignores its context, past a 5ms attempt timeout, with 50 callers at
// once: the p50, p99 and max of the lateness, in milliseconds. handrolled is
// the hand-written hard timeout (the tool on a goroutine of its own, the
// caller back when the context ends), for scale.
func BenchmarkHardTimeout(b *testing.B) {
	const limit = 5 * time.Millisecond
	for _, name := range []string{"toolsafe", "handrolled"} {
		b.Run(name, func(b *testing.B) {
			release := make(chan struct{})
			defer close(release)
			ignoring := middleware.Func("bench", "", func(context.Context, string) (string, error) {
				<-release
				return "", nil
			})
			call := func() {
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				_, _ = hardTimeout(ctx, ignoring)
			}
			if name == "toolsafe" {
				w := toolsafe.Wrap(ignoring, toolsafe.WithTimeout(limit, 1<<20))
				call = func() { w.Run(context.Background(), "x") }
			}
			lateness(b, limit, call)
		})
	}
}

// lateness runs call from 50 goroutines at once per iteration and reports
// how late past limit each got control back.
func lateness(b *testing.B, limit time.Duration, call func()) {
	var mu sync.Mutex
	var late []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				start := time.Now()
				call()
				d := time.Since(start) - limit
				mu.Lock()
				late = append(late, d)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	slices.Sort(late)
	pct := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(float64(len(late)), "calls")
}
