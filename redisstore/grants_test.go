package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/run"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
)

const refundInput = `{"order":"A-1001","amount_eur":25}`

func call(tool, input string) approval.CallInfo {
	return approval.CallInfo{Tool: tool, CallID: "call_1", Input: input, Attempt: 1, IdempotencyKey: "key-1"}
}

func decide(t *testing.T, g *redisstore.Grants, c approval.CallInfo) approval.Decision {
	t.Helper()
	d, err := g.Decide(background, c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGrantsAreSharedByTheFleet(t *testing.T) {
	rs := newReplicas(t, redisAddr, 3)
	a, b, c := rs[0].store.Grants(), rs[1].store.Grants(), rs[2].store.Grants()

	if d := decide(t, a, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("no grant yet: %v", d)
	}
	pending, err := b.Pending(background)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Tool != "refund" || pending[0].Input != refundInput || pending[0].IdempotencyKey != "key-1" {
		t.Fatalf("replica b sees pending %+v", pending)
	}
	// Granted through c with the same JSON in another key order.
	if err := c.Grant(background, "refund", `{ "amount_eur": 25, "order": "A-1001" }`); err != nil {
		t.Fatal(err)
	}
	if p, _ := b.Pending(background); len(p) != 0 {
		t.Errorf("still pending after the grant: %+v", p)
	}
	if d := decide(t, b, call("refund", refundInput)); d != approval.Approved {
		t.Fatalf("the grant given through c: %v on b", d)
	}
	if d := decide(t, a, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("a grant is used once; a second call got %v", d)
	}
	if d := decide(t, a, call("refund", `{"order":"A-1001","amount_eur":2500}`)); d != approval.Pending {
		t.Fatalf("a grant covered another input: %v", d)
	}
	if d := decide(t, a, call("charge", refundInput)); d != approval.Pending {
		t.Fatalf("a grant covered another tool: %v", d)
	}
}

func TestGrantsAreUsedOldestFirst(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	if err := a.Grant(background, "refund", refundInput); err != nil {
		t.Fatal(err)
	}
	if err := a.Deny(background, "refund", refundInput); err != nil {
		t.Fatal(err)
	}
	if err := a.Grant(background, "refund", refundInput); err != nil {
		t.Fatal(err)
	}
	var got []approval.Decision
	for range 4 {
		got = append(got, decide(t, b, call("refund", refundInput)))
	}
	want := []approval.Decision{approval.Approved, approval.Denied, approval.Approved, approval.Pending}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	if n, err := a.Revoke(background, "refund", refundInput); err != nil || n != 0 {
		t.Fatalf("revoke after every decision was used: %d, %v", n, err)
	}
	for range 2 {
		if err := a.Grant(background, "refund", refundInput); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.Revoke(background, "refund", `{"amount_eur":25,"order":"A-1001"}`); err != nil || n != 2 {
		t.Fatalf("revoked %d (%v), want 2", n, err)
	}
	if d := decide(t, a, call("refund", refundInput)); d != approval.Pending {
		t.Fatalf("a revoked grant was used: %v", d)
	}
}

func TestGrantsExpire(t *testing.T) {
	const ttl = 150 * time.Millisecond
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	a.TTL, b.TTL = ttl, ttl
	if err := a.Grant(background, "refund", refundInput); err != nil {
		t.Fatal(err)
	}
	decide(t, b, call("charge", `{}`)) // pending
	time.Sleep(ttl)                    // the grant's and the request's TTL
	if d := decide(t, b, call("refund", refundInput)); d != approval.Pending {
		t.Errorf("an expired grant was used: %v", d)
	}
	p, err := a.Pending(background)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p[0].Tool != "refund" {
		t.Errorf("pending %+v: want only the refund asked after the charge's request expired", p)
	}
}

func TestGrantsPendingAreBounded(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Grants(), rs[1].store.Grants()
	a.MaxPending, b.MaxPending = 3, 3
	for i := range 5 {
		decide(t, []*redisstore.Grants{a, b}[i%2], call("refund", fmt.Sprintf(`{"order":"A-%d"}`, i)))
	}
	// The latest request for a listed call refreshes it, in place.
	decide(t, a, approval.CallInfo{Tool: "refund", CallID: "call_9", Input: `{"order":"A-3"}`, Attempt: 2})
	p, err := b.Pending(background)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p {
		got = append(got, c.Input+" "+c.CallID)
	}
	want := []string{`{"order":"A-2"} call_1`, `{"order":"A-3"} call_9`, `{"order":"A-4"} call_1`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pending %v, want the newest 3, oldest first: %v", got, want)
	}
}

func TestGrantsDecisionsPerCallAreBounded(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	for i := range redisstore.DefaultMaxDecisions {
		if err := g.Grant(background, "refund", refundInput); err != nil {
			t.Fatalf("grant %d: %v", i+1, err)
		}
	}
	err := g.Grant(background, "refund", refundInput)
	if err == nil || errors.Is(err, redisstore.ErrUnavailable) {
		t.Fatalf("grant %d: %v, want a refusal", redisstore.DefaultMaxDecisions+1, err)
	}
}

func TestGrantsFailClosedWhileRedisIsDown(t *testing.T) {
	srv := ownServer(t)
	rs := newReplicas(t, srv.Addr(), 1, redisstore.WithRecheck(20*time.Millisecond))
	g := rs[0].store.Grants()
	if err := g.Grant(background, "refund", refundInput); err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	refund, err := toolsafe.New(middleware.Func("refund", "refunds an order", func(context.Context, string) (string, error) {
		ran.Add(1)
		return "refunded", nil
	}), toolsafe.WithApproval(g), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	_, err = refund.Call(background, refundInput)
	var ar *approval.Required
	if !errors.As(err, &ar) || !errors.Is(ar.Err, redisstore.ErrUnavailable) {
		t.Fatalf("with Redis down: %v, want an approval pause whose Err is ErrUnavailable", err)
	}
	if ran.Load() != 0 {
		t.Fatal("the tool ran with no approval known")
	}
	for name, f := range map[string]func() error{
		"Grant":   func() error { return g.Grant(background, "refund", refundInput) },
		"Deny":    func() error { return g.Deny(background, "refund", refundInput) },
		"Revoke":  func() error { _, err := g.Revoke(background, "refund", refundInput); return err },
		"Pending": func() error { _, err := g.Pending(background); return err },
	} {
		if err := f(); !errors.Is(err, redisstore.ErrUnavailable) {
			t.Errorf("%s with Redis down: %v, want ErrUnavailable", name, err)
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	// The restarted Redis is empty: the grant given before is gone, so the
	// call pauses again, failing closed.
	if _, err := refund.Call(background, refundInput); !errors.As(err, &ar) || ar.Err != nil {
		t.Fatalf("after Redis returned: %v, want a plain approval pause", err)
	}
	if !strings.Contains(rs[0].logs.String(), "grants") {
		t.Errorf("the outage's log does not say grants refuse:\n%s", rs[0].logs)
	}
}

func TestGrantsNotFromAStore(t *testing.T) {
	var g redisstore.Grants
	if _, err := g.Decide(background, call("refund", refundInput)); err == nil {
		t.Error("Decide of a zero Grants: no error")
	}
	if err := g.Grant(background, "refund", refundInput); err == nil {
		t.Error("Grant of a zero Grants: no error")
	}
}

// Regression: a grant's key joined the tool and the input with a NUL, so a
// grant for ("lookup", "x\x00refund-all") approved ("lookup\x00x",
// "refund-all").
func TestGrantsKeepTheToolAndTheInputApart(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	g := rs[0].store.Grants()
	if err := g.Grant(background, "lookup", "x\x00refund-all"); err != nil {
		t.Fatal(err)
	}
	if d, err := g.Decide(background, approval.CallInfo{Tool: "lookup\x00x", Input: "refund-all"}); err != nil || d != approval.Pending {
		t.Fatalf("another tool and input: %v, %v; want pending", d, err)
	}
	if d, err := g.Decide(background, approval.CallInfo{Tool: "lookup", Input: "x\x00refund-all"}); err != nil || d != approval.Approved {
		t.Fatalf("the granted call: %v, %v; want approved", d, err)
	}
}

// Regression: with more pending requests than Lua's unpack takes (about
// 8,000), Pending failed with "too many results to unpack", and the Store
// took that error reply for an outage.
func TestGrantsListManyPendingRequests(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1, redisstore.WithTimeout(5*time.Second))
	g := rs[0].store.Grants()
	g.MaxPending = 20000
	const n = 9000
	for i := range n {
		if _, err := g.Decide(background, approval.CallInfo{Tool: "refund", Input: fmt.Sprintf(`{"n":%d}`, i)}); err != nil {
			t.Fatalf("decide %d: %v", i, err)
		}
	}
	ps, err := g.Pending(background)
	if err != nil || len(ps) != n {
		t.Fatalf("%d pending, %v; want %d", len(ps), err, n)
	}
	if ps[0].Input != `{"n":0}` || ps[n-1].Input != fmt.Sprintf(`{"n":%d}`, n-1) {
		t.Errorf("pending from %q to %q; want oldest first", ps[0].Input, ps[n-1].Input)
	}
	if _, err := g.Revoke(background, "refund", `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	if !rs[0].store.Available() || rs[0].store.Outages() != 0 {
		t.Errorf("available %v after %d outages; want no outage", rs[0].store.Available(), rs[0].store.Outages())
	}
}

// An error reply from a Redis that works (here a key of the wrong type) fails
// the operation, not the Store: breakers and budgets go on sharing.
func TestAnErrorReplyIsNotAnOutage(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	l := rs[0].store.Ledger()
	if err := rs[0].client.Set(background, "{"+rs[0].prefix+":run:wrongtype}", "a string", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := l.Begin(background, "wrongtype", run.Entry{Tool: "charge"})
	if !errors.Is(err, run.ErrCorrupt) || errors.Is(err, redisstore.ErrUnavailable) {
		t.Fatalf("Begin on a key of the wrong type: %v; want run.ErrCorrupt, not ErrUnavailable", err)
	}
	// Regression (issue 33: a raw ASK reached a caller): the error names
	// the reply's code, never Redis's own words, which go to DEBUG.
	if msg := err.Error(); !strings.Contains(msg, "WRONGTYPE") || strings.Contains(msg, "Operation against a key") {
		t.Errorf("Begin's error %q; want the reply's code without its text", msg)
	}
	if !strings.Contains(rs[0].logs.String(), "Operation against a key") {
		t.Errorf("Redis's reply is not at DEBUG:\n%s", rs[0].logs)
	}
	if !rs[0].store.Available() || rs[0].store.Outages() != 0 {
		t.Errorf("available %v after %d outages; want no outage", rs[0].store.Available(), rs[0].store.Outages())
	}
}

// Regression (issue "exactly once under store faults", item 3, its sibling
// in the shared grants): {"acct":"\xff"} and {"acct":"\xfe"} were one key,
// and the pending list, JSON, held neither as given. Input that is not
// UTF-8 text is refused by Grant and Decide, and a grant for one spelling
// of U+FFFD covers no input that only Go's decoding makes alike.
func TestGrantsRefuseInputsThatAreNotValidUTF8(t *testing.T) {
	g := newReplicas(t, redisAddr, 1)[0].store.Grants()
	var ae *middleware.ArgsError
	if err := g.Grant(background, "refund", "{\"acct\":\"\xff\"}"); !errors.As(err, &ae) {
		t.Fatalf("Grant of input that is not UTF-8: %v; want an *ArgsError", err)
	}
	if d, err := g.Decide(background, call("refund", "{\"acct\":\"\xfe\"}")); d != approval.Pending || !errors.As(err, &ae) {
		t.Fatalf("Decide of input that is not UTF-8: %v, %v; want pending and an *ArgsError", d, err)
	}
	if err := g.Grant(background, "refund", `{"acct":"\ufffd"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Decide(background, call("refund", `{"acct":"\ud800"}`)); !errors.As(err, &ae) {
		t.Fatalf("Decide of a lone surrogate: %v; want an *ArgsError", err)
	}
	if p, err := g.Pending(background); err != nil || len(p) != 0 {
		t.Fatalf("pending %+v, %v; want nothing listed", p, err)
	}
	if d := decide(t, g, call("refund", "{\"acct\":\"\ufffd\"}")); d != approval.Approved {
		t.Fatalf("the granted input itself: %v", d)
	}
}
