package temporaltools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// unique is a name no other test uses: for task queues and workflow IDs.
func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// realFast are activity options for the dev server: retries 100ms apart.
func realFast(attempts int32) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: attempts},
	}
}

// startWorker runs a worker of the dev server on queue with the tools and
// the workflow wf (named "agent"), until the test ends.
func startWorker(t *testing.T, c client.Client, queue string, opts worker.Options, wf any, ts ...*Tool) worker.Worker {
	t.Helper()
	if opts.DeadlockDetectionTimeout == 0 {
		opts.DeadlockDetectionTimeout = time.Minute // a busy machine, the race detector
	}
	w := worker.New(c, queue, opts)
	if err := Register(w, ts...); err != nil {
		t.Fatal(err)
	}
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "agent"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// listed polls s until it lists a request whose call has callID, for at
// most 30s: Temporal's visibility indexes a memo a moment after the
// workflow wrote it, and says nothing when it has.
func listed(t *testing.T, s inbox.Store, callID string) approval.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		reqs, err := s.Requests(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if r.Call.CallID == callID {
				return r
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no request of the call %s was listed after 30s: %s", callID, show(reqs))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestTheInboxStoreListsAndDecidesWhatWorkflowsWaitFor(t *testing.T) {
	c := devClient(t)
	var u refunds
	up := toolsafetest.NewUpstream(&u)
	defer up.Close()
	refund := mustNew(t, refundTool(up.URL()), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
		toolsafe.WithApproval(Decisions(nil)))
	queue := unique("store")
	startWorker(t, c, queue, worker.Options{}, calls(RunOptions{Activity: realFast(3)}, call{"refund", `{"order":"A-1","amount_eur":25}`, "c-store"}), refund)

	// A run outside Temporal waits in the same inbox, through its grants.
	grants := approval.NewGrants()
	if d, _ := grants.Decide(context.Background(), approval.CallInfo{Tool: "charge", Input: `{"eur":5}`, CallID: "c-grants", Attempt: 1}); d != approval.Pending {
		t.Fatal(d)
	}
	store, err := NewStore(c, StoreOptions{Query: "TaskQueue = '" + queue + "'", Others: []inbox.Store{inbox.Memory(grants)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: unique("wf"), TaskQueue: queue}, "agent")
	if err != nil {
		t.Fatal(err)
	}
	req := listed(t, store, "c-store")
	other := listed(t, store, "c-grants")
	if !strings.HasPrefix(other.ID, "o0.") || req.Call.Tool != "refund" || req.Call.RunID != run.GetID() {
		t.Fatalf("listed %s and %s", show(req), show(other))
	}

	rec, err := store.Answer(ctx, req.ID, approval.Approved, "alice", "refund it")
	if err != nil {
		t.Fatal(err)
	}
	if rec.By != "alice" || rec.RequestID != req.ID || rec.Call.CallID != "c-store" {
		t.Fatalf("the record: %s", show(rec))
	}
	if _, err := store.Answer(ctx, req.ID, approval.Denied, "bob", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("a second answer: %v, want ErrNotPending", err)
	}
	if _, err := store.Answer(ctx, other.ID, approval.Denied, "carol", "no"); err != nil {
		t.Fatal(err)
	}
	var res []Result
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if _, applied := u.seen(); applied != 1 || res[0].Status() != "ok" {
		t.Fatalf("applied %d refunds; the call ended %s", applied, show(res))
	}
	if _, err := store.Answer(ctx, req.ID, approval.Approved, "alice", ""); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("an answer to a workflow that ended: %v, want ErrNotPending", err)
	}
	if len(grants.Pending()) != 0 {
		t.Fatal("the grants' request was not decided")
	}

	audit := func() []approval.Record {
		deadline := time.Now().Add(30 * time.Second)
		for {
			recs, err := store.Audit(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 2 || time.Now().After(deadline) {
				return recs
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if len(audit) != 2 || audit[0].By != "carol" || audit[0].RequestID != other.ID || audit[1].By != "alice" || audit[1].Comment != "refund it" {
		t.Fatalf("the audit trail, newest first: %s", show(audit))
	}
}
