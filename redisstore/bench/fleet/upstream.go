package main

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

// upstream is the flaky billing service of the fleet: a real HTTP server
// on 127.0.0.1 (toolsafetest.Upstream). Down, it answers every request
// 503 after a short wait, as a struggling service does; up, it answers
// the invoice. It counts, by phase, the requests it received and the
// half-open probes it served at once, and remembers which calls it
// answered.
type upstream struct {
	*toolsafetest.Upstream
	latency time.Duration
	down    atomic.Bool
	phase   atomic.Int32

	mu          sync.Mutex
	requests    [phaseCount]int
	probing     int
	mostProbing [phaseCount]int
	answered    map[string]int // call IDs answered 200, and how often
}

func newUpstream(latency time.Duration) *upstream {
	u := &upstream{latency: latency, answered: map[string]int{}}
	u.Upstream = toolsafetest.NewUpstream(http.HandlerFunc(u.serve))
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	ph := u.phase.Load()
	probe := r.Header.Get("X-Probe") != ""
	u.mu.Lock()
	u.requests[ph]++
	if probe {
		u.probing++
		u.mostProbing[ph] = max(u.mostProbing[ph], u.probing)
	}
	u.mu.Unlock()
	if probe {
		defer func() {
			u.mu.Lock()
			u.probing--
			u.mu.Unlock()
		}()
	}
	if u.down.Load() {
		t := time.NewTimer(u.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		http.Error(w, "billing is down", http.StatusServiceUnavailable)
		return
	}
	if id := r.Header.Get("X-Call"); id != "" {
		u.mu.Lock()
		u.answered[id]++
		u.mu.Unlock()
	}
	fmt.Fprint(w, `{"number":"INV-1001","amount_eur":25}`)
}

// setPhase makes later requests count in phase ph.
func (u *upstream) setPhase(ph int) { u.phase.Store(int32(ph)) }

// counts returns the requests and the most probes at once of phase ph.
func (u *upstream) counts(ph int) (requests, probes int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[ph], u.mostProbing[ph]
}

// reset forgets the counts, for the next mode.
func (u *upstream) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests, u.mostProbing, u.probing = [phaseCount]int{}, [phaseCount]int{}, 0
	u.answered = map[string]int{}
}

// twice returns how many calls the upstream answered more than once: a
// call applied twice, were the tool's effect not idempotent.
func (u *upstream) twice() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.answered {
		if c > 1 {
			n++
		}
	}
	return n
}

// wasAnswered reports whether the upstream answered the call id.
func (u *upstream) wasAnswered(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.answered[id] > 0
}
