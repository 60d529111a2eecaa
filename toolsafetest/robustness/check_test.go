package robustness_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest/robustness"
)

// failures is a testing.TB that keeps what Check reports instead of
// failing the test.
type failures struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *failures) Error(args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprint(args...))
}

func (f *failures) Errorf(format string, args ...any) { f.Error(fmt.Sprintf(format, args...)) }

// overwriting is a ledger whose Finish writes every outcome, over an
// answer too: the defect of issue 32, item 3.
type overwriting struct{ *run.MemoryLedger }

func (l overwriting) Finish(ctx context.Context, runID string, e run.Entry) (run.Finished, error) {
	f, err := l.MemoryLedger.Finish(ctx, runID, e)
	if f.Answer != nil {
		// Write it all the same: a Finish of another kind on a fresh
		// entry, then report it written.
		return run.Finished{Written: true}, err
	}
	return f, err
}

// sloppy is a Grants whose Decide uses a decision given for another
// run's request of the same tool and input: the defect of issue 32, item 8.
type sloppy struct {
	robustness.Grants
	g *approval.Grants
}

func (s sloppy) Decide(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
	for _, r := range s.g.Audit(0) {
		if r.Call.Tool == c.Tool && r.Call.CanonicalInput == c.CanonicalInput && r.Call.RunID != c.RunID {
			other := c
			other.RunID = r.Call.RunID
			if d, _ := s.g.Decide(ctx, other); d != approval.Pending {
				return d, nil
			}
		}
	}
	return s.g.Decide(ctx, c)
}

func replicas(n int, l run.Ledger, g robustness.Grants) []robustness.Replica {
	rs := make([]robustness.Replica, n)
	for i := range rs {
		rs[i] = robustness.Replica{Ledger: l, Grants: g}
	}
	return rs
}

func TestCheckFindsALedgerThatReportsAnAnswerReplaced(t *testing.T) {
	f := &failures{TB: t}
	robustness.Check(f, robustness.Config{Seed: 1, Ops: 800, Replicas: replicas(3, overwriting{run.NewMemoryLedger()}, robustness.MemoryGrants(approval.NewGrants()))})
	if !strings.Contains(strings.Join(f.errs, "\n"), "not linearizable") {
		t.Fatalf("Check reported %q; want the history found not linearizable", f.errs)
	}
}

func TestCheckFindsGrantsThatLetAnotherRequestUseADecision(t *testing.T) {
	f := &failures{TB: t}
	g := approval.NewGrants()
	robustness.Check(f, robustness.Config{Seed: 1, Ops: 800, Replicas: replicas(3, run.NewMemoryLedger(), sloppy{robustness.MemoryGrants(g), g})})
	if !strings.Contains(strings.Join(f.errs, "\n"), `not linearizable`) {
		t.Fatalf("Check reported %q; want the history of the grants found not linearizable", f.errs)
	}
}

func TestCheckPassesTheMemoryStores(t *testing.T) {
	f := &failures{TB: t}
	rep := robustness.Check(f, robustness.Config{Seed: 1, Replicas: replicas(2, run.NewMemoryLedger(), robustness.MemoryGrants(approval.NewGrants())), LoseReplies: 0.05, Kills: 0.05})
	if len(f.errs) > 0 || rep.Ops != robustness.DefaultOps || rep.StoreOps == 0 {
		t.Fatalf("%v: %q; want %d operations, all of them right", rep, f.errs, robustness.DefaultOps)
	}
}
