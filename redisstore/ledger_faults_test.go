package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// keyed is an upstream that applies each POST once per Idempotency-Key.
type keyed struct {
	mu      sync.Mutex
	applied map[string]bool
	*httptest.Server
}

func startKeyedUpstream(t *testing.T) *keyed {
	t.Helper()
	u := &keyed{applied: map[string]bool{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.applied[r.Header.Get("Idempotency-Key")] = true
		u.mu.Unlock()
		fmt.Fprint(w, "applied")
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *keyed) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.applied)
}

// Regression (a side effect applied twice after Redis froze for a
// moment): a payment completed, Redis was stopped before the ledger's
// entry was written, the write timed out (one WARN) and the entry was
// lost; after SIGCONT the run resumed on another replica paid again under
// a new idempotency key. The intent was recorded first, with the key: the
// resumed run sends the payment again under it, and it is applied once.
func TestASideEffectIsNotAppliedTwiceAfterRedisFroze(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 2, redisstore.WithRecheck(20*time.Millisecond))
	up := startKeyedUpstream(t)
	client := toolsafetest.NoKeepAliveClient()
	froze := false
	logs := &logBuffer{}
	payOn := func(afterApplying func()) *toolsafe.Tool {
		return toolsafe.Wrap(middleware.Func("pay", "", func(ctx context.Context, in string) (string, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL, strings.NewReader(in))
			req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
			out, err := middleware.DoHTTP(client, req)
			afterApplying()
			return out, err
		}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
			toolsafe.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	}
	pay := payOn(func() {
		if !froze {
			froze = true
			srv.Pause() // the payment is applied; its outcome is not written
		}
	})
	if r := pay.Run(run.With(background, "run-pay", rs[0].store.Ledger()), `{"order":"A-1","eur":25}`); r.Status() != "ok" {
		t.Fatalf("the payment: %+v", r)
	}
	srv.Resume()
	if n := len(logs.lines("WARN")); n != 1 || up.count() != 1 {
		t.Fatalf("%d WARN lines, %d payments; want the lost outcome said once, one payment:\n%s", n, up.count(), logs.String())
	}
	// Replica b resumes the run: the intent without an outcome is an
	// unknown outcome, sent again under its key.
	r := payOn(func() {}).Run(run.With(background, "run-pay", rs[1].store.Ledger()), `{"eur":25,"order":"A-1"}`)
	if r.Status() != "ok" || r.Replayed || up.count() != 1 {
		t.Fatalf("resumed on replica b: %+v, %d payments; want sent again under the same key, applied once", r, up.count())
	}
	es, err := rs[1].store.Ledger().Entries(background, "run-pay")
	if err != nil || len(es) != 1 || es[0].Status() != run.StatusAnswered {
		t.Errorf("entries %+v, %v; want the payment, answered", es, err)
	}
}

// With the append-only file on (appendfsync always), a Redis killed and
// restarted keeps every run's entries and every grant: a resumed run
// answers its completed calls from the ledger, and the grant still holds.
func TestTheLedgerAndGrantsSurviveARestartWithTheAppendOnlyFile(t *testing.T) {
	srv, err := redistest.StartDurable(nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// The test is about durability, not a slow Redis: appendfsync always on
	// a busy machine's disk can take longer than the Store's 50ms.
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond), redisstore.WithTimeout(5*time.Second))
	ledger, grants := rs[0].store.Ledger(), rs[0].store.Grants()
	up := startKeyedUpstream(t)
	client := toolsafetest.NoKeepAliveClient()
	post := middleware.Func("refund", "", func(ctx context.Context, in string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL, strings.NewReader(in))
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		return middleware.DoHTTP(client, req)
	})
	refund := toolsafe.Wrap(post, toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	closeAccount := toolsafe.Wrap(middleware.Func("close_account", "", func(context.Context, string) (string, error) {
		return "closed", nil
	}), toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
	ctx := run.With(background, "run-aof", ledger)
	for i := range 20 {
		if r := refund.Run(ctx, fmt.Sprintf(`{"order":"A-%d"}`, i)); r.Status() != "ok" {
			t.Fatalf("refund %d: %+v", i, r)
		}
	}
	r := closeAccount.Run(ctx, `{"account":"C-7"}`)
	var ar *approval.Required
	if !errors.As(r.Failure, &ar) {
		t.Fatalf("close: %+v; want a pause", r)
	}
	if err := grants.Grant(background, ar.Tool, ar.Input); err != nil {
		t.Fatal(err)
	}

	if err := srv.Restart(); err != nil { // SIGKILL, then start on the same file
		t.Fatal(err)
	}
	reconnect(t, rs[0])
	resumed := run.Resume(run.With(background, "", ledger), ar)
	for i := range 20 {
		if r := refund.Run(resumed, fmt.Sprintf(`{"order":"A-%d"}`, i)); !r.Replayed {
			t.Fatalf("refund %d after the restart: %+v; want it answered from the ledger", i, r)
		}
	}
	if r := closeAccount.Run(resumed, ar.Input); r.Status() != "ok" {
		t.Fatalf("the granted close after the restart: %v, %q", r.Kind(), r.Observation())
	}
	if up.count() != 20 {
		t.Errorf("%d refunds applied; want 20", up.count())
	}
}

// The Redis sibling of Resume silently using another ledger: a run paused
// on one store is resumed on a Store of another prefix. No tool runs; the
// program gets run.ErrNotHeld.
func TestResumeOnAStoreWithoutTheRunCallsNoTool(t *testing.T) {
	a := newReplicas(t, redisAddr, 1)[0]
	b := newReplicas(t, redisAddr, 1)[0] // another prefix: another ledger
	up := startKeyedUpstream(t)
	client := toolsafetest.NoKeepAliveClient()
	grants := approval.NewGrants()
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(ctx context.Context, in string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL, strings.NewReader(in))
		req.Header.Set("Idempotency-Key", middleware.IdempotencyKey(ctx))
		return middleware.DoHTTP(client, req)
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithApproval(grants))
	_, err := refund.Call(run.With(background, "", a.store.Ledger()), `{"order":"A-1"}`)
	var ar *approval.Required
	if !errors.As(err, &ar) {
		t.Fatalf("%v; want a pause", err)
	}
	grants.Grant(ar.Tool, ar.Input)
	_, err = refund.Call(run.Resume(run.With(background, "", b.store.Ledger()), ar), ar.Input)
	if !errors.Is(err, run.ErrNotHeld) || up.count() != 0 {
		t.Fatalf("resumed on another store: %v, %d applied; want ErrNotHeld and nothing applied", err, up.count())
	}
	if out, err := refund.Call(run.Resume(run.With(background, "", a.store.Ledger()), ar), ar.Input); err != nil || up.count() != 1 {
		t.Fatalf("resumed on its own store: %q, %v, %d applied", out, err, up.count())
	}
}

// reconnect waits until r's client reaches the restarted Redis (its old
// connections fail first) and r's Store uses it again.
func reconnect(t *testing.T, r *replica) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.client.Ping(background).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the restarted Redis does not answer")
		}
	}
	for !r.store.Available() { // its recheck is on a timer: nothing to wait on but time
		if time.Now().After(deadline) {
			t.Fatal("the Store does not use the restarted Redis")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
