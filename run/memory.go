package run

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The bounds of a MemoryLedger whose fields are zero.
const (
	// DefaultLedgerTTL is how long a run's entries are kept after its last
	// call.
	DefaultLedgerTTL = 24 * time.Hour
	// DefaultLedgerRuns is how many runs are kept; past it the least
	// recently used is dropped, one that only read first.
	DefaultLedgerRuns = 10_000
	// DefaultLedgerEntries is how many entries one run keeps; past it the
	// oldest of a tool that only reads is dropped first (see TrimEntries).
	DefaultLedgerEntries = 1_000
)

// MemoryLedger is a Ledger in this process's memory, bounded: a run's
// entries expire TTL after its last call, at most MaxRuns runs are kept
// (the least recently used dropped first, preferring one that only read) and at most MaxEntries entries
// per run (the oldest read-only entry dropped first, see TrimEntries). Dropped counts what the bounds
// dropped. A dropped entry can no longer be replayed: a resumed run then
// calls the tool again.
//
// The zero MemoryLedger is ready to use with the default bounds; set the
// fields before its first use. It is safe for concurrent use.
type MemoryLedger struct {
	// TTL is how long a run is kept after its last call; zero means
	// DefaultLedgerTTL (24 hours).
	TTL time.Duration
	// MaxRuns caps the runs kept; zero means DefaultLedgerRuns (10,000).
	MaxRuns int
	// MaxEntries caps the entries of one run; zero means
	// DefaultLedgerEntries (1,000).
	MaxEntries int
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time

	mu      sync.Mutex
	runs    map[string]*list.Element // of *memRun, most recently used at the front
	lru     list.List
	dropped atomic.Int64
}

type memRun struct {
	id      string
	entries []Entry
	last    time.Time
}

var _ Ledger = (*MemoryLedger)(nil)

// NewMemoryLedger returns an empty MemoryLedger with the default bounds.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{} }

var defaultLedger MemoryLedger

// DefaultLedger returns the process's MemoryLedger, the ledger of runs
// scoped with WithRun(ctx, id, nil), with the default bounds.
func DefaultLedger() *MemoryLedger { return &defaultLedger }

// Append adds e to run's entries. It never fails.
func (l *MemoryLedger) Append(_ context.Context, run string, e Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.expireLocked(now)
	r := l.getLocked(run)
	if r == nil {
		if l.runs == nil {
			l.runs = map[string]*list.Element{}
		}
		for l.lru.Len() >= l.maxRuns() { // make room, then add the new run
			l.dropLocked(l.victimLocked())
		}
		r = &memRun{id: run}
		l.runs[run] = l.lru.PushFront(r)
	}
	r.entries = append(r.entries, e)
	if over := len(r.entries) - l.maxEntries(); over > 0 {
		r.entries = TrimEntries(r.entries, over)
		l.dropped.Add(int64(over))
	}
	r.last = now
	return nil
}

// Entries returns a copy of run's entries, oldest first. It never fails.
func (l *MemoryLedger) Entries(_ context.Context, run string) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked(l.now())
	r := l.getLocked(run)
	if r == nil || len(r.entries) == 0 {
		return nil, nil
	}
	r.last = l.now() // read by a resumed run: in use
	return append([]Entry(nil), r.entries...), nil
}

// Runs is the number of runs kept.
func (l *MemoryLedger) Runs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// Dropped is the number of entries the bounds have dropped so far: expired
// runs', evicted runs' and the oldest of runs that grew past MaxEntries.
func (l *MemoryLedger) Dropped() int64 { return l.dropped.Load() }

func (l *MemoryLedger) getLocked(run string) *memRun {
	el, ok := l.runs[run]
	if !ok {
		return nil
	}
	l.lru.MoveToFront(el)
	return el.Value.(*memRun)
}

// victimLocked is the run to drop when there are too many: among the 64
// least recently used, the least recently used whose calls only read (a
// resumed run makes those again anyway), else the least recently used.
func (l *MemoryLedger) victimLocked() *memRun {
	el := l.lru.Back()
	for i := 0; i < 64 && el != nil; i, el = i+1, el.Prev() {
		r := el.Value.(*memRun)
		if !slices.ContainsFunc(r.entries, func(e Entry) bool { return !e.ReadOnly }) {
			return r
		}
	}
	return l.lru.Back().Value.(*memRun)
}

func (l *MemoryLedger) dropLocked(r *memRun) {
	l.lru.Remove(l.runs[r.id])
	delete(l.runs, r.id)
	l.dropped.Add(int64(len(r.entries)))
}

// expireLocked drops the runs whose last call is older than the TTL; they
// are at the back of the list.
func (l *MemoryLedger) expireLocked(now time.Time) {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = DefaultLedgerTTL
	}
	for el := l.lru.Back(); el != nil; el = l.lru.Back() {
		r := el.Value.(*memRun)
		if now.Sub(r.last) < ttl {
			return
		}
		l.dropLocked(r)
	}
}

func (l *MemoryLedger) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *MemoryLedger) maxRuns() int {
	if l.MaxRuns > 0 {
		return l.MaxRuns
	}
	return DefaultLedgerRuns
}

func (l *MemoryLedger) maxEntries() int {
	if l.MaxEntries > 0 {
		return l.MaxEntries
	}
	return DefaultLedgerEntries
}
