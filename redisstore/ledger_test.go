package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

func TestLedgerKeepsARunForEveryReplica(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Ledger(), rs[1].store.Ledger()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	entries := []run.Entry{
		{Tool: "charge", Input: `{"order":"A-1"}`, Key: "k1", CallID: "call_1", Output: "charged", At: at},
		{Tool: "refund", Input: `{"order":"A-1"}`, Key: "k2", CallID: "call_2", Kind: middleware.KindTimeout, SideEffectUnknown: true, At: at},
	}
	for _, e := range entries {
		if err := a.Append(background, "run {1}/é", e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Entries(background, "run {1}/é")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(entries) {
		t.Fatalf("replica b reads\n%+v\nwant\n%+v", got, entries)
	}
	if got, err := b.Entries(background, "another run"); err != nil || got != nil {
		t.Fatalf("an unknown run: %v, %v; want none", got, err)
	}
}

func TestLedgerIsBounded(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	l.MaxEntries, l.TTL = 3, time.Minute
	for i := range 5 {
		if err := l.Append(background, "run-1", run.Entry{Tool: "charge", Key: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Entries(background, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.Key)
	}
	if fmt.Sprint(keys) != "[2 3 4]" {
		t.Errorf("entries %v, want the newest 3: [2 3 4]", keys)
	}
	ttls, err := redistest.Keys(background, rs[0].client, rs[0].prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(ttls) != 1 {
		t.Errorf("keys %v, want the run's list only", ttls)
	}
	for k, ttl := range ttls {
		if ttl <= 0 || ttl > time.Minute {
			t.Errorf("%s: TTL %v, want up to the ledger's 1m", k, ttl)
		}
	}
}

// Regression: reads of the same run pushed a completed side effect out of
// the ledger, so the resumed run made it again.
func TestLedgerDropsReadsBeforeSideEffects(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	l.MaxEntries, l.TTL = 3, time.Minute
	appendAll := func(es ...run.Entry) {
		for _, e := range es {
			if err := l.Append(background, "run-1", e); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys := func() string {
		t.Helper()
		got, err := l.Entries(background, "run-1")
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, e := range got {
			ks = append(ks, e.Key)
		}
		return fmt.Sprint(ks)
	}
	// The field's text inside a string is not the field.
	appendAll(run.Entry{Tool: "refund", Key: "r1", Output: `{"ReadOnly":true}`})
	for i := range 10 {
		appendAll(run.Entry{Tool: "search", Key: fmt.Sprint("s", i+1), ReadOnly: true})
	}
	if got := keys(); got != "[r1 s9 s10]" {
		t.Fatalf("entries %v; want the refund kept and the newest reads: [r1 s9 s10]", got)
	}
	appendAll(run.Entry{Tool: "refund", Key: "r2"}, run.Entry{Tool: "refund", Key: "r3"}, run.Entry{Tool: "refund", Key: "r4"})
	if got := keys(); got != "[r2 r3 r4]" {
		t.Errorf("entries %v; want, with no read left, the oldest refund dropped: [r2 r3 r4]", got)
	}
}

func TestLedgerFailsClosedWhileRedisIsDown(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond))
	ledger := rs[0].store.Ledger()
	var charges, reads atomic.Int32
	charge, err := toolsafe.New(middleware.Func("charge", "charges an order", func(context.Context, string) (string, error) {
		charges.Add(1)
		return "charged", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := toolsafe.New(middleware.Func("lookup", "reads an order", func(context.Context, string) (string, error) {
		reads.Add(1)
		return "order A-1", nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := run.With(background, "run-1", ledger)
	if r := charge.Run(ctx, `{"order":"A-1"}`); r.Failure != nil {
		t.Fatal(r.Failure)
	}

	srv.Kill()
	r := charge.Run(run.With(background, "run-1", ledger), `{"order":"A-1"}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Failure.Retryable {
		t.Fatalf("a side-effecting call with the ledger unreadable: %+v, want tool-failed, not retryable", r)
	}
	if charges.Load() != 1 {
		t.Errorf("the charge ran %d times; with the ledger unreadable it must not run again", charges.Load())
	}
	if !strings.Contains(r.Observation(), "charge") {
		t.Errorf("the model is not told which call was refused: %q", r.Observation())
	}
	// A tool that only reads goes on without the ledger.
	if r := lookup.Run(ctx, `{"order":"A-1"}`); r.Failure != nil || reads.Load() != 1 {
		t.Fatalf("a read-only call with Redis down: %+v", r)
	}
	_, err = ledger.Entries(background, "run-1")
	if !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Entries with Redis down: %v, want ErrUnavailable", err)
	}
	if err := ledger.Append(background, "run-1", run.Entry{}); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Append with Redis down: %v, want ErrUnavailable", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	// The restarted Redis is empty: the run's entries are gone, so a
	// resumed run calls the charge again (with the same input it is a new
	// call), and records it.
	if r := charge.Run(run.With(background, "run-1", ledger), `{"order":"A-1"}`); r.Failure != nil || charges.Load() != 2 {
		t.Fatalf("after Redis returned: %+v, %d charges", r, charges.Load())
	}
	if got, err := ledger.Entries(background, "run-1"); err != nil || len(got) != 1 {
		t.Fatalf("entries after Redis returned: %v, %v", got, err)
	}
}

// Regression: an Entry's strings went through JSON, which turns bytes that
// are not UTF-8 into U+FFFD, so a resumed run on the Redis ledger did not
// find a call whose input was such text, and charged again.
func TestLedgerKeepsTextByteForByte(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	e := run.Entry{Tool: "charge", Input: "order A-1001 \xff 25 EUR", Key: "k", Output: "ok \xfe\x00", At: time.Unix(1700000000, 0).UTC()}
	if err := l.Append(background, "run-bytes", e); err != nil {
		t.Fatal(err)
	}
	got, err := l.Entries(background, "run-bytes")
	if err != nil || len(got) != 1 {
		t.Fatalf("%v, %v", got, err)
	}
	if got[0].Input != e.Input || got[0].Output != e.Output || got[0].Tool != e.Tool || !got[0].At.Equal(e.At) || got[0].Key != "k" {
		t.Errorf("read back %+v; want %+v", got[0], e)
	}
}
