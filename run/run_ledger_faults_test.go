package run_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/fallback"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// losingLedger is a MemoryLedger whose Finish fails while lose is set, as
// a store whose write timed out: the outcome is lost, the intent is kept.
type losingLedger struct {
	*run.MemoryLedger
	lose atomic.Bool
}

func (l *losingLedger) Finish(ctx context.Context, runID string, e run.Entry) (run.Finished, error) {
	if l.lose.Load() {
		return run.Finished{}, errors.New("i/o timeout")
	}
	return l.MemoryLedger.Finish(ctx, runID, e)
}

// Regression (a side effect applied twice after Redis froze for a moment):
// a payment completed, the ledger's write of it was lost, and the run
// resumed on another replica paid again under a new idempotency key. The
// intent, recorded before the first attempt, holds the key: the resumed
// run sends the payment again under it, and the upstream applies it once;
// a tool without keys is not sent again, and the model is told to check.
func TestASideEffectIsNotAppliedTwiceWhenItsOutcomeIsLost(t *testing.T) {
	t.Run("with keys: sent again under the recorded key", func(t *testing.T) {
		up := startKeyed(t)
		pay := toolsafe.Wrap(up.poster("pay", "/payments"), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		l := &losingLedger{MemoryLedger: run.NewMemoryLedger()}
		l.lose.Store(true)
		if r := pay.Run(run.With(context.Background(), "run-pay", l), `{"order":"A-1"}`); r.Status() != "ok" {
			t.Fatalf("first: %+v", r)
		}
		l.lose.Store(false)
		r := pay.Run(run.With(context.Background(), "run-pay", l), `{"order":"A-1"}`)
		if r.Status() != "ok" || r.Replayed || up.count("/payments") != 1 {
			t.Fatalf("resumed: %+v, applied %d; want sent again and applied once", r, up.count("/payments"))
		}
		es, _ := l.Entries(context.Background(), "run-pay")
		if len(es) != 1 || es[0].Status() != run.StatusAnswered {
			t.Errorf("entries %+v; want the one payment, answered", es)
		}
	})
	t.Run("without keys: not sent again", func(t *testing.T) {
		var pays atomic.Int32
		pay := toolsafe.Wrap(counted("pay", &pays, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey))
		l := &losingLedger{MemoryLedger: run.NewMemoryLedger()}
		l.lose.Store(true)
		pay.Run(run.With(context.Background(), "run-pay", l), `{"order":"A-1"}`)
		l.lose.Store(false)
		r := pay.Run(run.With(context.Background(), "run-pay", l), `{"order":"A-1"}`)
		if pays.Load() != 1 || r.Failure == nil || r.Failure.SideEffect != middleware.SideEffectUnknown ||
			!strings.Contains(r.Observation(), "Check whether it was applied") {
			t.Fatalf("resumed: %q, paid %d; want not sent, the model told to check first", r.Observation(), pays.Load())
		}
	})
}

// Two runs resumed from one pause at once (a job delivered twice): the
// second finds the first's intent and does not make the call again.
func TestTwoRunsResumedFromOnePauseMakeTheCallOnce(t *testing.T) {
	var refunds atomic.Int32
	inside, release := make(chan struct{}), make(chan struct{})
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
		refunds.Add(1)
		close(inside)
		<-release
		return "refunded", nil
	}), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	l := run.NewMemoryLedger()
	r := refund.Run(run.With(context.Background(), "run-twice", l), `{"order":"A-1"}`)
	ar, ok := r.Failure.Cause.(*approval.Required)
	if !ok {
		t.Fatalf("%v; want a pause", r.Kind())
	}
	grants.Grant(ar.Tool, ar.Input)
	first := make(chan middleware.Result)
	go func() { first <- refund.Run(run.Resume(run.With(context.Background(), "", l), ar), ar.Input) }()
	<-inside
	second := refund.Run(run.Resume(run.With(context.Background(), "", l), ar), ar.Input)
	close(release)
	if r := <-first; r.Status() != "ok" {
		t.Fatalf("the first resumed run: %+v", r)
	}
	if refunds.Load() != 1 || second.Failure == nil || second.Failure.SideEffect != middleware.SideEffectUnknown {
		t.Fatalf("refunds %d, the second: %+v; want one refund, the second told its outcome is unknown", refunds.Load(), second)
	}
}

// Regression (Runs that only read evict a run that paid): with MaxRuns 80,
// 70 runs that charged then 40 runs that only read evicted 7 charged runs
// (the victim search looked at the 64 least recently used only), and
// resuming one charged again.
func TestRunsThatOnlyReadNeverEvictARunThatPaid(t *testing.T) {
	var charges, searches atomic.Int32
	charge := toolsafe.Wrap(counted("charge", &charges, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	search := toolsafe.Wrap(counted("search", &searches, nil, nil))
	l := &run.MemoryLedger{MaxRuns: 80}
	for i := range 70 {
		charge.Run(run.With(context.Background(), fmt.Sprint("paid-", i), l), `{"order":"A-1"}`)
	}
	for i := range 40 {
		search.Run(run.With(context.Background(), fmt.Sprint("reader-", i), l), `{"q":"x"}`)
	}
	for i := range 70 {
		if r := charge.Run(run.With(context.Background(), fmt.Sprint("paid-", i), l), `{"order":"A-1"}`); !r.Replayed {
			t.Fatalf("paid-%d: %+v; want its charge answered from the ledger", i, r)
		}
	}
	if charges.Load() != 70 || l.Runs() != 80 {
		t.Errorf("%d charges, %d runs kept; want 70 and 80", charges.Load(), l.Runs())
	}
}

// Regression (the loop guard counts a fallback as a second call): with
// Total: 2, one call that fell back to a *toolsafe.Tool alternative left
// two entries, and the model's second call was refused with "this request
// already made 2 tool calls". A fallback is part of its call.
func TestTheLoopGuardCountsAFallbackAsPartOfItsCall(t *testing.T) {
	var alt atomic.Int32
	manual := toolsafe.Wrap(counted("manual_refund", &alt, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	limits := toolsafe.WithCallLimits(run.Limits{Total: 2})
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
		return "", middleware.NewToolError("refunds are down")
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithFallback(fallback.To(manual)), limits)
	var looks atomic.Int32
	lookup := toolsafe.Wrap(counted("lookup", &looks, nil, nil), limits)
	l := run.NewMemoryLedger()
	ctx := run.With(context.Background(), "run-fb", l)
	if r := refund.Run(ctx, `{"order":"A-1"}`); r.Fallback != "manual_refund" || alt.Load() != 1 {
		t.Fatalf("first: %+v; want the alternative's answer", r)
	}
	if r := lookup.Run(ctx, `{"order":"A-1"}`); r.Status() != "ok" {
		t.Fatalf("the model's second call: %v, %q; want it made", r.Kind(), r.Observation())
	}
	if r := lookup.Run(ctx, `{"order":"A-2"}`); r.Kind() != middleware.KindCallLimit {
		t.Errorf("the third call: %v; want call-limit", r.Kind())
	}
	// The alternative keeps an entry of its own, for its key, marked as
	// part of its call; a resumed run replays the refund, fallback and all.
	if r := refund.Run(run.With(context.Background(), "run-fb", l), `{"order":"A-1"}`); !r.Replayed || alt.Load() != 1 {
		t.Errorf("resumed: %+v, alternative ran %d; want the fallback's answer replayed", r, alt.Load())
	}
}

// Regression (Resume silently uses another ledger): on a second replica,
// Resume on a context not scoped on the shared ledger fell back to the
// in-memory one, and the refund that completed before the pause ran again.
// A resumed run whose ledger does not hold it calls no tool; the program
// gets an error naming the fix.
func TestResumeOnALedgerWithoutTheRunCallsNoTool(t *testing.T) {
	up := startKeyed(t)
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(up.poster("issue_refund", "/refunds"), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	closeAccount := toolsafe.Wrap(up.poster("close_account", "/accounts/close"),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants))
	ts := []tools.Tool{refund, closeAccount}
	calls := func() toolsafetest.Turn {
		return toolsafetest.Calls(toolsafetest.ToolCall{ID: "c1", Tool: "issue_refund", Arguments: `{"order":"A-1"}`},
			toolsafetest.ToolCall{ID: "c2", Tool: "close_account", Arguments: `{"account":"C-7"}`})
	}
	shared := run.NewMemoryLedger() // replica A's and B's store
	first := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(calls(), toolsafetest.Answer("no")), ts))
	_, err := first.Call(run.With(context.Background(), "", shared), map[string]any{"input": "Refund and close."})
	ar := testkit.Paused(t, err)
	grants.Grant(ar.Tool, ar.Input)

	// Replica B resumes without scoping the context on the shared ledger.
	resumed := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(calls(), toolsafetest.Answer("done")), ts))
	_, err = resumed.Call(run.Resume(context.Background(), ar), map[string]any{"input": "Refund and close."})
	if !errors.Is(err, run.ErrNotHeld) || !strings.Contains(err.Error(), "run.With(ctx") {
		t.Fatalf("resumed on the wrong ledger: %v; want ErrNotHeld naming the fix", err)
	}
	if up.count("/refunds") != 1 || up.count("/accounts/close") != 0 {
		t.Fatalf("refunds %d, closes %d; want no tool called", up.count("/refunds"), up.count("/accounts/close"))
	}
	// On the ledger that recorded it, the run resumes.
	again := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(toolsafetest.NewModel(calls(), toolsafetest.Answer("done")), ts))
	if _, err := again.Call(run.Resume(run.With(context.Background(), "", shared), ar), map[string]any{"input": "Refund and close."}); err != nil {
		t.Fatal(err)
	}
	if up.count("/refunds") != 1 || up.count("/accounts/close") != 1 {
		t.Errorf("refunds %d, closes %d; want each once", up.count("/refunds"), up.count("/accounts/close"))
	}
}
