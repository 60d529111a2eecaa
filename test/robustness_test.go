package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolsafetest/robustness"
)

// The robustness test of the run ledger and the grants in memory: four
// replicas (eight workers) share one MemoryLedger and one approval.Grants
// and drive calls, identical calls in flight, pauses, grants, answers and
// resumes (two replicas at once) of the same runs, six at a time, while store replies are lost
// after the operation was applied and replicas are killed between a call's
// effect and the record of its outcome. The history is linearizable with
// respect to the ledger's and the grants' sequential model, no effect was
// applied twice, no settled answer replaced, no decision used by another
// request. Repeat a run with -robust.seed.
func TestRobustnessOfTheLedgerAndGrantsInMemory(t *testing.T) {
	l, g := run.NewMemoryLedger(), robustness.MemoryGrants(approval.NewGrants())
	reps := make([]robustness.Replica, 4)
	for i := range reps {
		reps[i] = robustness.Replica{Ledger: l, Grants: g}
	}
	rep := robustness.Check(t, robustness.Config{Replicas: reps, Ops: 1000, Duration: 30 * time.Second, LoseReplies: 0.05, Kills: 0.05})
	fmt.Println(rep) // the CI log's line: seed, operations, faults
	if rep.FaultCount() == 0 || rep.Effects == 0 || rep.Pauses == 0 {
		t.Errorf("%v; want faults injected, effects applied and calls paused", rep)
	}
}
