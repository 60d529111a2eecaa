package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// outcomes are entries of a call that ended each way, by status.
var outcomes = map[run.Status]run.Entry{
	run.StatusAnswered: {Output: "refunded"},
	run.StatusUnknown:  {Kind: middleware.KindTimeout, SideEffectUnknown: true},
	run.StatusFailed:   {Kind: middleware.KindToolError},
	run.StatusOpen:     {Kind: middleware.KindApprovalRequired},
	run.StatusRefused:  {Kind: middleware.KindCallLimit},
}

// finishWrites is Ledger's machine as its doc states it: whether Finish
// with the outcome to, by the call holding the intent (own) or another,
// writes over an entry whose status is from.
func finishWrites(from, to run.Status, own bool) bool {
	switch {
	case from == run.StatusAnswered:
		return false
	case to == run.StatusAnswered:
		return true
	case to == run.StatusUnknown:
		return from != run.StatusUnknown
	}
	return from == run.StatusPending && own
}

// ended returns e with the outcome of status s.
func ended(e run.Entry, s run.Status) run.Entry {
	o := outcomes[s]
	e.Pending, e.Kind, e.SideEffectUnknown, e.Output = false, o.Kind, o.SideEffectUnknown, o.Output
	return e
}

// The MemoryLedger follows the machine of the Ledger's doc, for every
// status an entry can be in and every outcome a call can end with, from
// the call that holds the intent and from another one that sent it again.
func TestTheMemoryLedgerFollowsTheMachine(t *testing.T) {
	statuses := []run.Status{run.StatusPending, run.StatusAnswered, run.StatusUnknown, run.StatusFailed, run.StatusOpen, run.StatusRefused}
	ctx := context.Background()
	for _, from := range statuses {
		for to := range outcomes {
			for _, own := range []bool{true, false} {
				name := fmt.Sprintf("%d to %d own %v", from, to, own)
				l := run.NewMemoryLedger()
				b, err := l.Begin(ctx, "r", run.Entry{Tool: "refund", Input: "A-1", Key: "k", Claim: "c1"})
				if err != nil || !b.New {
					t.Fatalf("%s: begin %+v, %v", name, b, err)
				}
				if from != run.StatusPending {
					if f, _ := l.Finish(ctx, "r", ended(b.Entry, from)); !f.Written {
						t.Fatalf("%s: the first Finish was not written", name)
					}
				}
				e := ended(b.Entry, to)
				if !own {
					e.Claim = "c2"
				}
				f, err := l.Finish(ctx, "r", e)
				want := finishWrites(from, to, own)
				if err != nil || f.Written != want {
					t.Errorf("%s: written %v, %v; want %v", name, f.Written, err, want)
				}
				if (f.Answer != nil) != (from == run.StatusAnswered) || f.Answer != nil && f.Answer.Output != "refunded" {
					t.Errorf("%s: answer %+v; want the standing answer only when one stands", name, f.Answer)
				}
				es, _ := l.Entries(ctx, "r")
				got, wantStatus := es[0].Status(), from
				if want {
					wantStatus = to
				}
				if len(es) != 1 || got != wantStatus {
					t.Errorf("%s: the entry is %d; want %d", name, got, wantStatus)
				}
			}
		}
	}
}

// Begin gives a call its own pending intent back (a Begin whose reply was
// lost), as a new call counted once; another call's pending intent is an
// unknown outcome; an Open entry taken over is the taker's.
func TestBeginFindsTheCallersOwnIntent(t *testing.T) {
	ctx := context.Background()
	l := run.NewMemoryLedger()
	e := run.Entry{Tool: "refund", Input: "A-1", Key: "k1", Claim: "c1"}
	if b, _ := l.Begin(ctx, "r", e); !b.New || b.Entry.N != 0 {
		t.Fatalf("the first begin: %+v", b)
	}
	again := e
	again.Key = "k-retry" // the retry is another call of the model's, with a key of its own
	b, _ := l.Begin(ctx, "r", again)
	if !b.New || b.Entry.N != 0 || b.Entry.Key != "k1" || b.Counts.Identical != 0 || b.Counts.Total != 0 {
		t.Fatalf("the same claim again: %+v; want its own intent at 0, under its key, new, with the counts before it", b)
	}
	other := e
	other.Claim = "c2"
	if b, _ := l.Begin(ctx, "r", other); b.New || b.Entry.Status() != run.StatusPending || b.Entry.Claim != "c2" {
		t.Fatalf("another claim: %+v; want the pending entry, not new, with the caller's claim", b)
	}
	if f, _ := l.Finish(ctx, "r", ended(b.Entry, run.StatusOpen)); !f.Written {
		t.Fatal("the owner's pause was not written")
	}
	b, _ = l.Begin(ctx, "r", other)
	if !b.New || b.Entry.Key != "k1" {
		t.Fatalf("the open entry taken over: %+v; want new, under its key", b)
	}
	if f, _ := l.Finish(ctx, "r", ended(b.Entry, run.StatusFailed)); !f.Written {
		t.Fatal("the taker's failure was not written: it holds the intent now")
	}
	if es, _ := l.Entries(ctx, "r"); len(es) != 1 || es[0].Status() != run.StatusFailed || es[0].Claim != "" {
		t.Fatalf("entries %+v", es)
	}
}
