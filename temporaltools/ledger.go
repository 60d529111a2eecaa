package temporaltools

import (
	"context"
	"sync"

	"github.com/toolsafe/toolsafe/run"
)

// callLedger is the run ledger of one activity attempt: the workflow keeps
// the run's calls in its state (Run), and hands each activity the counts
// of the calls before it, so the loop guard decides from the workflow's
// history, the same on every replay and every worker. Temporal's history
// makes sure a completed activity is never run again, so nothing is
// replayed from here: each call is new, under the activity's key.
type callLedger struct {
	tool, key string
	counts    run.Counts

	mu       sync.Mutex
	begun    bool
	readOnly bool
}

var _ run.Ledger = (*callLedger)(nil)

// Begin records the call of the activity's tool as new, under the
// activity's key, with the workflow's counts. Any other call in it (a
// fallback's alternative, part of the call) is recorded as new too, under
// its own key, and the loop guard does not count it.
func (l *callLedger) Begin(_ context.Context, _ string, e run.Entry) (run.Begun, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Pending = true
	if e.Alternative || l.begun || e.Tool != l.tool {
		return run.Begun{Entry: e, New: true}, nil
	}
	l.begun, l.readOnly = true, e.ReadOnly
	e.Key = l.key
	return run.Begun{Entry: e, New: true, Counts: l.counts}, nil
}

// Finish does nothing: the activity's outcome goes back to the workflow,
// which records it in its state.
func (l *callLedger) Finish(context.Context, string, run.Entry) (run.Finished, error) {
	return run.Finished{Written: true}, nil
}

// Holds reports true: the workflow holds the run.
func (l *callLedger) Holds(context.Context, string) (bool, error) { return true, nil }

// onlyReads reports whether the tool only reads (no side effects, no
// gate), as the run ledger layer told Begin.
func (l *callLedger) onlyReads() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.begun && l.readOnly
}
