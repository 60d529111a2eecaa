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

// record begins and finishes e in run on l, failing t on an error.
func record(t *testing.T, l run.Ledger, runID string, e run.Entry) run.Begun {
	t.Helper()
	b, err := l.Begin(background, runID, e)
	if err != nil {
		t.Fatal(err)
	}
	done := e
	done.N, done.Key, done.Pending = b.Entry.N, b.Entry.Key, false
	if _, err := l.Finish(background, runID, done); err != nil {
		t.Fatal(err)
	}
	return b
}

func keysOf(t *testing.T, l *redisstore.Ledger, runID string) string {
	t.Helper()
	got, err := l.Entries(background, runID)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, e := range got {
		ks = append(ks, e.Key)
	}
	return fmt.Sprint(ks)
}

func TestLedgerKeepsARunForEveryReplica(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Ledger(), rs[1].store.Ledger()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	entries := []run.Entry{
		{Tool: "charge", Input: `{"order":"A-1"}`, Key: "k1", CallID: "call_1", Output: "charged", At: at},
		{Tool: "refund", Input: `{"order":"A-1"}`, Key: "k2", CallID: "call_2", Kind: middleware.KindTimeout, SideEffectUnknown: true, At: at},
	}
	for _, e := range entries {
		record(t, a, "run {1}/é", e)
	}
	got, err := b.Entries(background, "run {1}/é")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(entries) {
		t.Fatalf("replica b reads\n%+v\nwant\n%+v", got, entries)
	}
	// Replica b's next identical charge takes over the answered entry.
	if got, err := b.Begin(background, "run {1}/é", run.Entry{Tool: "charge", Input: `{"order":"A-1"}`, Key: "new"}); err != nil ||
		got.New || got.Entry.Key != "k1" || got.Entry.Output != "charged" {
		t.Fatalf("begin on replica b: %+v, %v; want the answered entry k1", got, err)
	}
	if ok, err := b.Holds(background, "another run"); err != nil || ok {
		t.Fatalf("an unknown run: held %v, %v; want not", ok, err)
	}
}

// The counts of the loop guard, as each call's intent finds them.
func TestLedgerCountsTheCallsOfARun(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	record(t, l, "r", run.Entry{Tool: "search", Input: "a", Key: "s1", Kind: middleware.KindFailed, ReadOnly: true})
	record(t, l, "r", run.Entry{Tool: "search", Input: "b", Key: "s2", ReadOnly: true})
	record(t, l, "r", run.Entry{Tool: "refund", Input: "a", Key: "r1", Kind: middleware.KindCallLimit})
	record(t, l, "r", run.Entry{Tool: "refund", Input: "a", Key: "r2", Alternative: true})
	b, err := l.Begin(background, "r", run.Entry{Tool: "search", Input: "a", N: 1, Key: "s3", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := run.Counts{Total: 2, Tool: 2, Identical: 1, IdenticalFailed: 1, Final: true}
	if !b.New || b.Counts != want || b.Entry.N != 1 {
		t.Errorf("begun %+v; want new at 1 with %+v (the refusal and the alternative not counted)", b, want)
	}
}

func TestLedgerIsBounded(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	l.MaxEntries, l.TTL = 3, time.Minute
	for i := range 5 {
		record(t, l, "run-1", run.Entry{Tool: "charge", Input: fmt.Sprint(i), Key: fmt.Sprint(i)})
	}
	if got := keysOf(t, l, "run-1"); got != "[2 3 4]" {
		t.Errorf("entries %v, want the newest 3: [2 3 4]", got)
	}
	ttls, err := redistest.Keys(background, rs[0].client, rs[0].prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(ttls) != 2 {
		t.Errorf("keys %v, want the run's hash and its set of entries kept", ttls)
	}
	for k, ttl := range ttls {
		if ttl <= 0 || ttl > time.Minute {
			t.Errorf("%s: TTL %v, want up to the ledger's 1m", k, ttl)
		}
	}
}

// Regression: reads of the same run pushed a completed side effect out of
// the ledger, so the resumed run made it again. Reads, failures and
// refusals go first.
func TestLedgerDropsReadsBeforeSideEffects(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	l.MaxEntries, l.TTL = 3, time.Minute
	record(t, l, "run-1", run.Entry{Tool: "refund", Key: "r1", Output: `{"ReadOnly":true}`})
	record(t, l, "run-1", run.Entry{Tool: "refund", Input: "x", Key: "f1", Kind: middleware.KindFailed})
	for i := range 10 {
		record(t, l, "run-1", run.Entry{Tool: "search", Input: fmt.Sprint(i), Key: fmt.Sprint("s", i+1), ReadOnly: true})
	}
	if got := keysOf(t, l, "run-1"); got != "[r1 s9 s10]" {
		t.Fatalf("entries %v; want the refund kept and the newest reads: [r1 s9 s10]", got)
	}
	for _, k := range []string{"r2", "r3", "r4"} {
		record(t, l, "run-1", run.Entry{Tool: "refund", Input: k, Key: k})
	}
	if got := keysOf(t, l, "run-1"); got != "[r2 r3 r4]" {
		t.Errorf("entries %v; want, with no read left, the oldest refund dropped: [r2 r3 r4]", got)
	}
}

// Regression (a store outage reads as the tool's failure): with Redis
// down, a side-effecting call ended as tool-failed, "do not call it
// again". It is not made, and it is tool-busy, temporarily unavailable,
// with ErrUnavailable as its cause.
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
	if r.Kind() != middleware.KindBusy || !errors.Is(r.Failure, redisstore.ErrUnavailable) {
		t.Fatalf("a side-effecting call with the ledger unreachable: %+v, want tool-busy caused by ErrUnavailable", r)
	}
	if charges.Load() != 1 || !strings.Contains(r.Observation(), "temporarily unavailable") {
		t.Errorf("the charge ran %d times, the model read %q; want it not run again, and told it is temporarily unavailable", charges.Load(), r.Observation())
	}
	// A tool that only reads goes on without the ledger.
	if r := lookup.Run(ctx, `{"order":"A-1"}`); r.Failure != nil || reads.Load() != 1 {
		t.Fatalf("a read-only call with Redis down: %+v", r)
	}
	if _, err := ledger.Holds(background, "run-1"); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Holds with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := ledger.Finish(background, "run-1", run.Entry{}); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("Finish with Redis down: %v, want ErrUnavailable", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	// This Redis keeps nothing across a restart (no append-only file): the
	// run is gone, so the charge, with the same input, is a new call.
	if r := charge.Run(run.With(background, "run-1", ledger), `{"order":"A-1"}`); r.Failure != nil || charges.Load() != 2 {
		t.Fatalf("after Redis returned: %+v, %d charges", r, charges.Load())
	}
}

// Regression: an Entry's strings went through JSON, which turns bytes that
// are not UTF-8 into U+FFFD, so a resumed run on the Redis ledger did not
// find a call whose input was such text, and charged again.
func TestLedgerKeepsTextByteForByte(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	e := run.Entry{Tool: "charge", Input: "order A-1001 \xff 25 EUR", Key: "k", Output: "ok \xfe\x00", At: time.Unix(1700000000, 0).UTC()}
	record(t, l, "run-bytes", e)
	got, err := l.Entries(background, "run-bytes")
	if err != nil || len(got) != 1 {
		t.Fatalf("%v, %v", got, err)
	}
	if got[0].Input != e.Input || got[0].Output != e.Output || got[0].Tool != e.Tool || !got[0].At.Equal(e.At) || got[0].Key != "k" {
		t.Errorf("read back %+v; want %+v", got[0], e)
	}
}
