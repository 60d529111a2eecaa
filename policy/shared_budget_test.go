package policy_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// ratioBudget admits retries while they are at most a fifth of the
// attempts, as a fleet's shared budget would.
type ratioBudget struct {
	mu                sync.Mutex
	attempts, retries int
}

func (b *ratioBudget) Admit(_ context.Context, retry bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if retry && 5*(b.retries+1) > b.attempts {
		return false
	}
	b.attempts++
	if retry {
		b.retries++
	}
	return true
}

// A shared budget is told of every attempt and asked before every retry:
// when it refuses, the call ends with budget-exceeded instead of retrying.
func TestASharedBudgetCapsRetries(t *testing.T) {
	calls := 0
	down := middleware.Func("fetch", "", func(context.Context, string) (string, error) {
		calls++
		return "", middleware.Transient(errors.New("reset"))
	})
	shared := &ratioBudget{}
	tool := toolsafe.Wrap(down, toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(0), Shared: shared}))
	var kinds []middleware.Kind
	for range 10 {
		kinds = append(kinds, tool.Run(context.Background(), "x").Kind())
	}
	if kinds[0] != middleware.KindBudget || kinds[9] != middleware.KindBudget {
		t.Errorf("kinds %v; want budget-exceeded while retries would pass a fifth of the attempts", kinds)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if 5*shared.retries > shared.attempts || shared.attempts != calls {
		t.Errorf("%d retries for %d attempts (%d calls of the tool); want at most a fifth, every attempt told", shared.retries, shared.attempts, calls)
	}
}
