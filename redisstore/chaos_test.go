package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
	"github.com/toolsafe/toolsafe/run"
)

// effects is the upstream's own account of what it applied: per input,
// the idempotency keys a keyed POST was applied under, and how many times
// a POST without a key was applied.
type effects struct {
	mu    sync.Mutex
	keyed map[string]map[string]bool
	plain map[string]int
}

func (f *effects) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 256)
		n, _ := r.Body.Read(body)
		in, key := string(body[:n]), r.Header.Get("Idempotency-Key")
		f.mu.Lock()
		if strings.HasPrefix(r.URL.Path, "/pay") {
			if f.keyed[in] == nil {
				f.keyed[in] = map[string]bool{}
			}
			f.keyed[in][key] = true
		} else {
			f.plain[in]++
		}
		f.mu.Unlock()
		fmt.Fprint(w, "applied")
	})
}

// reachedKey carries, to the tools of the chaos test, the flag a call
// sets when it reaches the upstream.
type reachedKey struct{}

// The chaos test of the run ledger under store faults: 25 workers make
// 5,000 side-effecting calls in 500 runs on two replicas while Redis is
// stopped past the Store's timeout and continued (SIGSTOP, SIGCONT) and
// killed and restarted (on its append-only file) under them, so that
// intents and outcomes time out, land late or are lost; each run is then resumed on both
// replicas at once, and once more after the faults. The upstream applied
// no effect twice, every effect it applied has its entry in the ledger,
// and no call reached the upstream without its intent recorded.
func TestChaosOfTheLedgerUnderStoreFaults(t *testing.T) {
	const workers, runsEach, callsEach = 25, 20, 10
	srv, err := redistest.StartDurable(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithRecheck(10*time.Millisecond), redisstore.WithTimeout(100*time.Millisecond))
	fx := &effects{keyed: map[string]map[string]bool{}, plain: map[string]int{}}
	up := httptest.NewServer(fx.handler())
	t.Cleanup(up.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers * 4}}
	t.Cleanup(client.CloseIdleConnections)
	tool := func(name string, se middleware.SideEffects) *toolsafe.Tool {
		return toolsafe.Wrap(middleware.Func(name, "", func(ctx context.Context, in string) (string, error) {
			ctx.Value(reachedKey{}).(*atomic.Bool).Store(true)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL+"/"+name, strings.NewReader(in))
			if se == middleware.SideEffectsWithKey {
				req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
			}
			return middleware.DoHTTP(client, req)
		}), toolsafe.WithSideEffects(se), toolsafe.WithLogger(slog.New(slog.DiscardHandler)))
	}
	pay, ship := tool("pay", middleware.SideEffectsWithKey), tool("ship", middleware.SideEffectsWithoutKey)

	var calls, refused, unknown, bypasses, wrongKinds atomic.Int64
	// call makes the i-th call of run id on replica r, and checks that a
	// call refused for the store's sake never reached the upstream.
	call := func(id string, r, i int) {
		in := fmt.Sprintf(`{"op":%d,"run":%q}`, i, id) // canonical, as the ledger keeps it
		tl := pay
		if i%2 == 1 {
			tl = ship
		}
		reached := new(atomic.Bool)
		res := tl.Run(context.WithValue(run.With(background, id, rs[r].store.Ledger()), reachedKey{}, reached), in)
		calls.Add(1)
		switch {
		case res.Failure == nil:
		case res.Kind() == middleware.KindBusy && errors.Is(res.Failure, redisstore.ErrUnavailable):
			refused.Add(1)
			if reached.Load() {
				bypasses.Add(1)
			}
			for !rs[r].store.Available() { // as a program would, wait for the store
				time.Sleep(2 * time.Millisecond)
			}
		case res.Kind() == middleware.KindToolError && res.Failure.SideEffect == middleware.SideEffectUnknown:
			unknown.Add(1) // not sent again: an earlier identical call's outcome is unknown
		default:
			wrongKinds.Add(1)
			t.Logf("call %s: %v %q", in, res.Kind(), res.Observation())
		}
	}
	// The faults, 16 of them: stops of 60-200ms (past the Store's timeout
	// of 100ms), and every fourth a kill and a restart.
	faultsDone := make(chan struct{})
	rng := rand.New(rand.NewPCG(20261201, 11))
	go func() {
		defer close(faultsDone)
		for n := range 16 {
			time.Sleep(time.Duration(30+rng.IntN(70)) * time.Millisecond)
			if n%4 == 3 {
				if err := srv.Restart(); err != nil {
					t.Errorf("restart: %v", err)
					return
				}
				continue
			}
			srv.Pause()
			time.Sleep(time.Duration(60+rng.IntN(140)) * time.Millisecond)
			srv.Resume()
		}
	}()
	var mu sync.Mutex
	var runs []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// At least runsEach runs, and runs until the faults are over.
			for k := 0; ; k++ {
				select {
				case <-faultsDone:
					if k >= runsEach {
						return
					}
				default:
				}
				id := fmt.Sprintf("run-%d-%d", w, k)
				mu.Lock()
				runs = append(runs, id)
				mu.Unlock()
				for i := range callsEach {
					call(id, (w+k)%2, i)
				}
				var both sync.WaitGroup // resumed on both replicas at once
				for r := range 2 {
					both.Go(func() {
						for i := range callsEach {
							call(id, r, i)
						}
					})
				}
				both.Wait()
			}
		})
	}
	wg.Wait()
	for _, r := range rs {
		reconnect(t, r)
	}
	// Once more, on a Redis that answers: nothing new is applied.
	during := refused.Load()
	for _, id := range runs {
		for i := range callsEach {
			call(id, 0, i)
		}
	}
	after := refused.Load() - during // a busy machine may time Redis out even now: no assertion
	checkEffects(t, fx, rs[0].store.Ledger(), runs)
	t.Logf("%d calls in %d runs: %d refused for the store (%d after the faults), %d not sent again (outcome unknown); %d outages seen by replica 0",
		calls.Load(), len(runs), refused.Load(), after, unknown.Load(), rs[0].store.Outages())
	if bypasses.Load() != 0 || wrongKinds.Load() != 0 {
		t.Errorf("%d calls reached the upstream though refused for the store, %d ended with another kind", bypasses.Load(), wrongKinds.Load())
	}
}

// checkEffects fails t for an effect applied twice, or applied without
// its entry in the ledger l.
func checkEffects(t *testing.T, fx *effects, l *redisstore.Ledger, runs []string) {
	t.Helper()
	var dupes, lost int
	recorded := map[string]bool{}
	for _, id := range runs {
		es, err := l.Entries(background, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			recorded[e.Input] = true
		}
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	for in, keys := range fx.keyed {
		if len(keys) > 1 {
			dupes++
		}
		if !recorded[in] {
			lost++
		}
	}
	for in, n := range fx.plain {
		if n > 1 {
			dupes++
		}
		if !recorded[in] {
			lost++
		}
	}
	if dupes != 0 || lost != 0 || len(fx.keyed)+len(fx.plain) == 0 {
		t.Errorf("%d effects applied twice, %d applied without their entry, of %d applied", dupes, lost, len(fx.keyed)+len(fx.plain))
	}
}
