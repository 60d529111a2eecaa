package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
	"github.com/toolsafe/toolsafe/toolsafetest/robustness"
)

// The robustness test of the ledger and the grants on a real Redis of the
// test's own (never the shared one: it is killed): three replicas, each
// with its own client, reach it through a TCP proxy on 127.0.0.1 and drive
// calls, identical calls in flight, pauses, grants, answers and resumes
// (two replicas at once) of the same runs while Redis is stopped past the
// Store's timeout (SIGSTOP), its clients paused (CLIENT PAUSE), killed and
// restarted on its append-only file, kept busy by another client's slow
// script, and while the proxy forwards requests and drops their replies;
// replicas are killed between a call's effect and its record. The history
// is linearizable with respect to the ledger's and the grants' sequential
// model, no effect was applied twice, no settled answer replaced, no
// decision used by another request. Repeat a run with -robust.seed.
func TestRobustnessOfTheLedgerAndGrantsOnRedis(t *testing.T) {
	srv, err := redistest.StartDurable(nil, t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, redistest.HowToStart)
	}
	t.Cleanup(srv.Close)
	px := startProxy(t, srv.Addr())
	rs := newReplicas(t, px.addr(), 3, redisstore.WithRecheck(10*time.Millisecond), redisstore.WithTimeout(100*time.Millisecond))
	reps := make([]robustness.Replica, len(rs))
	for i, r := range rs {
		reps[i] = robustness.Replica{Ledger: r.store.Ledger(), Grants: r.store.Grants()}
	}
	direct := newClient(t, srv.Addr()) // the faults' own client, past the proxy
	wait := func(ctx context.Context, d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	faults := []robustness.Fault{
		{Name: "redis stopped", Inject: func(ctx context.Context, rng *rand.Rand) error {
			srv.Pause() // SIGSTOP: it answers nothing, past the Store's 100ms
			time.Sleep(time.Duration(60+rng.IntN(140)) * time.Millisecond)
			srv.Resume()
			wait(ctx, 50*time.Millisecond)
			return nil
		}},
		{Name: "clients paused", Inject: func(ctx context.Context, rng *rand.Rand) error {
			ms := 50 + rng.IntN(150)
			if err := direct.Do(context.Background(), "CLIENT", "PAUSE", ms).Err(); err != nil {
				return err
			}
			wait(ctx, time.Duration(ms+50)*time.Millisecond)
			return nil
		}},
		{Name: "redis killed and restarted", Inject: func(ctx context.Context, rng *rand.Rand) error {
			if err := srv.Restart(); err != nil { // SIGKILL, then start on the same file
				return err
			}
			wait(ctx, time.Duration(50+rng.IntN(100))*time.Millisecond)
			return nil
		}},
		{Name: "slow script", Inject: func(ctx context.Context, rng *rand.Rand) error {
			// Another client's script keeps Redis busy for 80-300ms: the
			// replicas' scripts wait, and their replies come too late.
			if err := direct.Eval(context.Background(), busyScript, nil, 80_000+rng.IntN(220_000)).Err(); err != nil {
				return err
			}
			wait(ctx, 50*time.Millisecond)
			return nil
		}},
		{Name: "replies lost", Inject: func(ctx context.Context, rng *rand.Rand) error {
			// For 20-100ms, every connection that carries a request loses
			// its replies: the request is applied, the replica times out.
			px.loseFor(time.Duration(20+rng.IntN(80)) * time.Millisecond)
			wait(ctx, 150*time.Millisecond)
			return nil
		}},
	}
	ready := func(ctx context.Context, i int) { // as a program would, wait for the store
		for ctx.Err() == nil && !rs[i].store.Available() {
			wait(ctx, 2*time.Millisecond)
		}
	}
	rep := robustness.Check(t, robustness.Config{Replicas: reps, Ops: 1000, Duration: 30 * time.Second, Kills: 0.05, Ready: ready, Faults: faults})
	fmt.Println(rep) // the CI log's line: seed, operations, faults
	if rep.FaultCount() == 0 || rep.Effects == 0 || rep.Pauses == 0 {
		t.Errorf("%v; want faults injected, effects applied and calls paused", rep)
	}
}

// busyScript runs for ARGV[1] microseconds of Redis's own clock.
const busyScript = `
local t = redis.call('TIME')
local from = t[1] * 1000000 + t[2]
repeat
  t = redis.call('TIME')
until t[1] * 1000000 + t[2] - from >= tonumber(ARGV[1])
return 1`

// proxy forwards TCP connections on 127.0.0.1 to a Redis, and can lose the
// replies of the requests it forwards.
type proxy struct {
	ln       net.Listener
	target   string
	loseTill atomic.Int64 // UnixNano: a connection that carries a request before then loses every reply after it
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

// startProxy starts a proxy to target, closed when t ends.
func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// loseFor makes the connections that carry a request within d lose their
// replies from then on (a reply half lost would leave the client reading
// the wrong reply: go-redis drops a connection that timed out, as it must).
func (p *proxy) loseFor(d time.Duration) { p.loseTill.Store(time.Now().Add(d).UnixNano()) }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close() // Redis is down: the client sees a refused connection
			continue
		}
		if !p.track(c, s) {
			c.Close()
			s.Close()
			return
		}
		var mute atomic.Bool
		p.wg.Add(2)
		go func() { // requests, all forwarded
			defer p.wg.Done()
			defer s.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if time.Now().UnixNano() < p.loseTill.Load() {
						mute.Store(true)
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // replies, dropped once the connection is muted
			defer p.wg.Done()
			defer c.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 && !mute.Load() {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						s.Close()
					}
					return
				}
			}
		}()
	}
}

// track keeps c and s to close with the proxy; false once it is closed.
func (p *proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c], p.conns[s] = true, true
	return true
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
