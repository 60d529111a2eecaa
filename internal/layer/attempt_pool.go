package layer

import (
	"sync"
	"time"
)

// workers are the goroutines attempts run on. A worker whose attempt is
// over waits for the next one instead of exiting, so an attempt mostly runs
// on a goroutine whose stack has grown already: a tool with deep calls (an
// MCP client, an HTTP/2 stack) does not grow a fresh goroutine's stack again
// on every attempt, and no goroutine is started. At most maxIdleWorkers
// wait at once; one left unused for idleWorkerTime to twice that exits.
var workers workerPool

const (
	maxIdleWorkers = 16
	idleWorkerTime = 50 * time.Millisecond
)

// workerPool is the idle workers, the most recently used last, and the
// sweep that retires the ones left unused.
type workerPool struct {
	mu    sync.Mutex
	idle  []*worker
	tick  uint64      // sweeps so far
	sweep *time.Timer // made with the first idle worker; armed while one is idle
	armed bool
}

// worker is one idle goroutine: it waits on jobs for its next attempt, or
// for nil, which tells it to exit.
type worker struct {
	jobs      chan *attemptRun
	idleSince uint64 // the pool's tick when it went idle
}

// start runs r on an idle worker, or on a new goroutine when none is idle.
func (p *workerPool) start(r *attemptRun) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.jobs <- r // buffered: the worker may not have parked yet
		return
	}
	p.mu.Unlock()
	go p.work(r)
}

// work runs r, then the attempts start hands it, until it is retired.
func (p *workerPool) work(r *attemptRun) {
	var w *worker
	for r != nil {
		r.run()
		if w == nil {
			w = &worker{jobs: make(chan *attemptRun, 1)}
		}
		if !p.rest(w) {
			return
		}
		r = <-w.jobs
	}
}

// rest makes w idle, unless as many are idle already: it reports whether w
// should wait for another attempt.
func (p *workerPool) rest(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= maxIdleWorkers {
		return false
	}
	w.idleSince = p.tick
	p.idle = append(p.idle, w)
	if !p.armed {
		p.armed = true
		if p.sweep == nil {
			p.sweep = time.AfterFunc(idleWorkerTime, p.retire)
		} else {
			p.sweep.Reset(idleWorkerTime)
		}
	}
	return true
}

// retire tells the workers idle since before the previous sweep to exit,
// and sweeps again later while some are still idle.
func (p *workerPool) retire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tick++
	kept := p.idle[:0]
	for _, w := range p.idle {
		if w.idleSince+1 < p.tick {
			w.jobs <- nil
			continue
		}
		kept = append(kept, w)
	}
	clear(p.idle[len(kept):])
	p.idle = kept
	if p.armed = len(kept) > 0; p.armed {
		p.sweep.Reset(idleWorkerTime)
	}
}
