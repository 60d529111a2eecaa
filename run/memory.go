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
	// defaultLedgerRuns is how many runs are kept; past it the least
	// recently used run that only read is dropped, else the least recently
	// used.
	defaultLedgerRuns = 10_000
	// DefaultLedgerEntries is how many entries one run keeps; past it the
	// oldest entry that will never be replayed (a read's, a failure's, a
	// refusal's) is dropped, else the oldest.
	DefaultLedgerEntries = 1_000
)

// MemoryLedger is a Ledger in this process's memory, bounded: a run's
// entries expire TTL after its last call, at most MaxRuns runs are kept
// (past it the least recently used run that only read is dropped, else
// the least recently used) and at most MaxEntries entries per run (past it
// the oldest entry that will never be replayed goes first: a read's, a
// failure's, a refusal's). Dropped counts what the bounds dropped. A
// dropped entry is forgotten: a resumed run makes its call again. Each
// operation takes time independent of the run's length.
//
// The zero MemoryLedger is ready to use with the default bounds; set the
// fields before its first use. It is safe for concurrent use.
type MemoryLedger struct {
	// TTL is how long a run is kept after its last call; zero means
	// DefaultLedgerTTL (24 hours).
	TTL time.Duration
	// MaxRuns caps the runs kept; zero means 10,000.
	MaxRuns int
	// MaxEntries caps the entries of one run; zero means
	// DefaultLedgerEntries (1,000).
	MaxEntries int
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time

	mu      sync.Mutex
	runs    map[string]*memRun
	readers list.List // runs that only read, most recently used at the front
	writers list.List // the other runs, the same way
	dropped atomic.Int64
}

// memRun is one run of a MemoryLedger.
type memRun struct {
	id      string
	el      *list.Element // in readers or writers
	writes  bool          // an entry of a tool that does not only read
	last    time.Time
	seq     int64
	total   int
	perTool map[string]int
	groups  map[groupKey]*group
	drop    list.List // of *memEntry dropped first, oldest first
	keep    list.List // of the other *memEntry, oldest first
}

// group is a run's calls of one tool with one input.
type group struct {
	base          int         // the position of recs[0]
	recs          []*memEntry // by position; nil where dropped
	next          int         // the next position of a new call
	kept          int
	calls, failed int
	final         bool
}

type memEntry struct {
	e      Entry
	g      *group
	el     *list.Element // in drop when inDrop, else in keep
	inDrop bool
	seq    int64
}

var _ Ledger = (*MemoryLedger)(nil)

// NewMemoryLedger returns an empty MemoryLedger with the default bounds.
func NewMemoryLedger() *MemoryLedger { return &MemoryLedger{} }

var defaultLedger MemoryLedger

// DefaultLedger returns the process's MemoryLedger, the ledger of runs
// scoped with With(ctx, id, nil), with the default bounds.
func DefaultLedger() *MemoryLedger { return &defaultLedger }

// Begin records the call e's intent or finds the earlier entry it
// continues (see Ledger). It never fails.
func (l *MemoryLedger) Begin(_ context.Context, runID string, e Entry) (Begun, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.useLocked(runID, true)
	k := groupKey{e.Tool, e.Input}
	g := r.groups[k]
	if g == nil {
		g = &group{}
		r.groups[k] = g
	}
	var first *memEntry
	for p := max(e.N, g.base); p < g.next; p++ {
		me := g.at(p)
		switch {
		case me == nil:
		case e.Claim != "" && me.e.Pending && me.e.Claim == e.Claim:
			return r.own(g, me), nil
		case first == nil && takesOver(me.e.Status(), e.ReadOnly):
			first = me // the caller's own intent may still come later
		}
	}
	if first != nil {
		if first.e.Status() != StatusOpen {
			b := Begun{Entry: first.e}
			b.Entry.Claim = e.Claim
			return b, nil
		}
		b := Begun{New: true, Counts: r.counts(g, e.Tool)}
		first.e.Pending, first.e.Claim = true, e.Claim
		r.count(g, first.e, StatusOpen, StatusPending)
		b.Entry = first.e
		return b, nil
	}
	e.N, e.Pending = max(g.next, e.N), true
	e.Kind, e.Retryable, e.SideEffectUnknown, e.Output, e.Fallback = "", false, false, "", ""
	b := Begun{Entry: e, New: true, Counts: r.counts(g, e.Tool)}
	r.add(g, e)
	if !e.ReadOnly && !r.writes {
		l.readers.Remove(r.el)
		r.el, r.writes = l.writers.PushFront(r), true
	}
	l.trimLocked(r)
	return b, nil
}

// Finish records how the call e ended, unless the machine of Ledger says
// not to (see Ledger). It never fails.
func (l *MemoryLedger) Finish(_ context.Context, runID string, e Entry) (Finished, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.useLocked(runID, false)
	if r == nil {
		return Finished{}, nil
	}
	g := r.groups[groupKey{e.Tool, e.Input}]
	if g == nil {
		return Finished{}, nil
	}
	me := g.at(e.N)
	if me == nil || me.e.Key != e.Key {
		return Finished{}, nil
	}
	from, to := me.e.Status(), e.Status()
	if !writes(from, to, me.e.Pending && me.e.Claim == e.Claim, me.e.ReadOnly) {
		if from == StatusAnswered && !me.e.ReadOnly {
			a := me.e
			return Finished{Answer: &a}, nil
		}
		return Finished{}, nil
	}
	e.Alternative, e.ReadOnly, e.Claim = me.e.Alternative, me.e.ReadOnly, ""
	me.e = e
	r.count(g, e, from, to)
	g.final = e.Final()
	r.place(me)
	return Finished{Written: true}, nil
}

// Holds reports whether the ledger keeps the run runID. It never fails.
func (l *MemoryLedger) Holds(_ context.Context, runID string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.useLocked(runID, false) != nil, nil
}

// Entries returns a copy of the run's entries, oldest first, for
// inspection: toolsafe's layers never read a whole run. It never fails.
func (l *MemoryLedger) Entries(_ context.Context, runID string) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.useLocked(runID, false)
	if r == nil {
		return nil, nil
	}
	all := make([]*memEntry, 0, r.drop.Len()+r.keep.Len())
	for _, li := range []*list.List{&r.drop, &r.keep} {
		for el := li.Front(); el != nil; el = el.Next() {
			all = append(all, el.Value.(*memEntry))
		}
	}
	slices.SortFunc(all, func(a, b *memEntry) int { return int(a.seq - b.seq) })
	out := make([]Entry, len(all))
	for i, me := range all {
		out[i] = me.e
		out[i].Claim = ""
	}
	return out, nil
}

// Runs is the number of runs kept.
func (l *MemoryLedger) Runs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}

// Dropped is the number of entries the bounds have dropped so far: expired
// runs', evicted runs' and the oldest of runs that grew past MaxEntries.
func (l *MemoryLedger) Dropped() int64 { return l.dropped.Load() }

// useLocked returns the run runID, marked as used now, after dropping the
// expired runs; a new one when create, after making room; else nil when
// the ledger does not keep it.
func (l *MemoryLedger) useLocked(runID string, create bool) *memRun {
	now := l.now()
	l.expireLocked(now)
	r := l.runs[runID]
	switch {
	case r != nil:
		if r.writes {
			l.writers.MoveToFront(r.el)
		} else {
			l.readers.MoveToFront(r.el)
		}
	case !create:
		return nil
	default:
		if l.runs == nil {
			l.runs = map[string]*memRun{}
		}
		for len(l.runs) >= l.maxRuns() {
			l.dropLocked(l.victimLocked())
		}
		r = &memRun{id: runID, perTool: map[string]int{}, groups: map[groupKey]*group{}}
		r.el = l.readers.PushFront(r)
		l.runs[runID] = r
	}
	r.last = now
	return r
}

// victimLocked is the run to drop when there are too many: the least
// recently used that only read (a resumed run makes its calls again
// anyway), else the least recently used.
func (l *MemoryLedger) victimLocked() *memRun {
	if el := l.readers.Back(); el != nil {
		return el.Value.(*memRun)
	}
	return l.writers.Back().Value.(*memRun)
}

func (l *MemoryLedger) dropLocked(r *memRun) {
	if r.writes {
		l.writers.Remove(r.el)
	} else {
		l.readers.Remove(r.el)
	}
	delete(l.runs, r.id)
	l.dropped.Add(int64(r.drop.Len() + r.keep.Len()))
}

// expireLocked drops the runs whose last call is older than the TTL; they
// are at the back of the lists.
func (l *MemoryLedger) expireLocked(now time.Time) {
	ttl := l.TTL
	if ttl <= 0 {
		ttl = DefaultLedgerTTL
	}
	for _, li := range []*list.List{&l.readers, &l.writers} {
		for el := li.Back(); el != nil; el = li.Back() {
			r := el.Value.(*memRun)
			if now.Sub(r.last) < ttl {
				break
			}
			l.dropLocked(r)
		}
	}
}

// trimLocked drops r's entries beyond MaxEntries: those that will never be
// replayed first, then the oldest.
func (l *MemoryLedger) trimLocked(r *memRun) {
	for r.drop.Len()+r.keep.Len() > l.maxEntries() {
		li := &r.drop
		if li.Len() == 0 {
			li = &r.keep
		}
		me := li.Remove(li.Front()).(*memEntry)
		me.g.remove(me.e.N)
		if k := (groupKey{me.e.Tool, me.e.Input}); me.g.kept == 0 && r.groups[k] == me.g {
			delete(r.groups, k) // forgotten: its next call is the first again
		}
		l.dropped.Add(1)
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
	return defaultLedgerRuns
}

func (l *MemoryLedger) maxEntries() int {
	if l.MaxEntries > 0 {
		return l.MaxEntries
	}
	return DefaultLedgerEntries
}
