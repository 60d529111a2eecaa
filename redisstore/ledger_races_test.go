package redisstore_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/run"
)

// Regression (issue 32, item 3, on Redis): two replicas resume one pause
// at once. A, granted, refunds; B took over A's intent while it was
// pending, its gate asked after A answered and paused, and the finish
// script wrote B's pause over A's answer, so the next resume refunded
// again. The answer stands: B replays it, and so does a third resume.
func TestTheLoserOfAResumeRaceReplaysTheWinnersAnswer(t *testing.T) {
	rs := newReplicas(t, redisAddr, 2)
	a, b := rs[0].store.Ledger(), rs[1].store.Ledger()
	var refunds atomic.Int32
	inA, bAsks, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	grants := approval.NewGrants()
	var asked atomic.Int32
	approver := approval.ApproverFunc(func(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
		if asked.Add(1) == 3 { // replica B's gate: it asks once A has answered
			close(bAsks)
			<-aDone
		}
		return grants.Decide(ctx, c)
	})
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
		if refunds.Add(1) == 1 {
			close(inA)
			<-bAsks // B has taken over A's pending intent
		}
		return "refunded 900 EUR", nil
	}), toolsafe.WithApproval(approver), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))

	r := refund.Run(run.With(background, "run-race", a), `{"order":"A-1001"}`)
	ar, ok := r.Failure.Cause.(*approval.Required)
	if !ok {
		t.Fatalf("%v; want a pause", r.Kind())
	}
	grants.Grant(ar.Tool, ar.Input)
	won := make(chan middleware.Result)
	go func() {
		r := refund.Run(run.Resume(run.With(background, "", a), ar), ar.Input)
		close(aDone)
		won <- r
	}()
	<-inA
	lost := refund.Run(run.Resume(run.With(background, "", b), ar), ar.Input)
	if r := <-won; r.Status() != "ok" || r.Replayed {
		t.Fatalf("replica A: %v %q; want it to refund", r.Kind(), r.Observation())
	}
	if lost.Status() != "ok" || !lost.Replayed || lost.Output != "refunded 900 EUR" {
		t.Fatalf("replica B: %v %q, replayed %v; want A's answer replayed, not a pause", lost.Kind(), lost.Observation(), lost.Replayed)
	}
	grants.Grant(ar.Tool, ar.Input)
	third := refund.Run(run.Resume(run.With(background, "", b), ar), ar.Input)
	if !third.Replayed || refunds.Load() != 1 {
		t.Fatalf("a third resume: %v %q, replayed %v, %d refunds; want A's answer replayed and one refund",
			third.Kind(), third.Observation(), third.Replayed, refunds.Load())
	}
	es, err := b.Entries(background, "run-race")
	if err != nil || len(es) != 1 || es[0].Status() != run.StatusAnswered {
		t.Errorf("entries %+v, %v; want the refund, answered", es, err)
	}
}

// lostReply is a go-redis hook that, once armed, lets the next run of the
// script sha reach Redis and run there, and loses its reply: the client
// sees a read timeout, as when a Store's timeout passes while Redis runs
// the script (behind another client's slow one).
type lostReply struct {
	sha  string
	lose atomic.Bool
}

func (h *lostReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *lostReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *lostReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && h.runs(cmd) && h.lose.CompareAndSwap(true, false) {
			lost := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
			cmd.SetErr(lost)
			return lost
		}
		return err
	}
}

// runs reports whether cmd runs the script: EVALSHA of its hash, or EVAL
// of its source (go-redis sends it when Redis did not know the hash).
func (h *lostReply) runs(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 {
		return false
	}
	name, _ := args[0].(string)
	arg, _ := args[1].(string)
	switch strings.ToLower(name) {
	case "evalsha":
		return arg == h.sha
	case "eval":
		sum := sha1.Sum([]byte(arg))
		return hex.EncodeToString(sum[:]) == h.sha
	}
	return false
}

// Regression (issue 32, item 4, on Redis): the begin script recorded the
// refund's intent, but its reply was lost; the model, told "temporarily
// unavailable, try again", tried again, and the refund (no idempotency
// keys) was refused with "may have been applied … check first", though it
// was never called. The retry finds the intent under its own claim and
// makes the call, once, counted once.
func TestALostReplyToBeginIsNotAnUnknownOutcome(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1, redisstore.WithRecheck(20*time.Millisecond))
	hook := &lostReply{sha: redisstore.BeginScriptHash()}
	rs[0].client.AddHook(hook)
	var refunds atomic.Int32
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
		refunds.Add(1)
		return "refunded", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey), toolsafe.WithCallLimits(run.Limits{Identical: 1}))
	ledger := rs[0].store.Ledger()
	ctx := run.With(background, "run-lost", ledger)

	hook.lose.Store(true)
	r := refund.Run(ctx, `{"order":"A-1001"}`)
	if r.Kind() != middleware.KindBusy || !r.Failure.Retryable || !errors.Is(r.Failure, redisstore.ErrUnavailable) || refunds.Load() != 0 {
		t.Fatalf("the lost reply: %v, retryable %v, %v, %d refunds; want tool-busy, retryable, ErrUnavailable, not called",
			r.Kind(), r.Failure.Retryable, r.Failure.Cause, refunds.Load())
	}
	if es, err := ledger.Entries(background, "run-lost"); err == nil || len(es) != 0 {
		t.Fatalf("entries %v, %v; want the Store down for a moment", es, err)
	}
	rs[0].logs.waitFor(t, "INFO", "redis answers again")
	if es, err := ledger.Entries(background, "run-lost"); err != nil || len(es) != 1 || es[0].Status() != run.StatusPending {
		t.Fatalf("entries %+v, %v; want the intent the lost reply recorded, pending", es, err)
	}
	r = refund.Run(ctx, `{"order":"A-1001"}`)
	if r.Status() != "ok" || refunds.Load() != 1 {
		t.Fatalf("the model tries again: %v %q, %d refunds; want the refund made once", r.Kind(), r.Observation(), refunds.Load())
	}
	es, err := ledger.Entries(background, "run-lost")
	if err != nil || len(es) != 1 || es[0].Status() != run.StatusAnswered {
		t.Errorf("entries %+v, %v; want the one refund, answered", es, err)
	}
}

// syncLog is a log sink safe for concurrent calls.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) count(level, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, line := range strings.Split(s.b.String(), "\n") {
		if strings.Contains(line, "level="+level) && strings.Contains(line, text) {
			n++
		}
	}
	return n
}

// Regression (issue 32, item 5, on Redis): an entry of the run that cannot
// be read (a body that is not JSON, a status the scripts do not know, the
// run's key of another type) read as "temporarily unavailable, try again",
// forever, and an unknown status made the call a new one, so the refund
// was applied again. It fails for good, once said at ERROR, with
// run.ErrCorrupt, and Redis is no less available for it.
func TestACorruptLedgerEntryIsNotAnOutage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		corrupt func(t *testing.T, r *replica, hash string)
	}{
		{"an entry that is not JSON", func(t *testing.T, r *replica, hash string) { setFields(t, r, hash, "r:", "{not json") }},
		{"a status no script knows", func(t *testing.T, r *replica, hash string) { setFields(t, r, hash, "s:", "z-k") }},
		{"a count that is not a number", func(t *testing.T, r *replica, hash string) { setFields(t, r, hash, "n:", "many") }},
		{"the run's key of another type", func(t *testing.T, r *replica, hash string) {
			if err := r.client.Del(background, hash).Err(); err != nil {
				t.Fatal(err)
			}
			if err := r.client.Set(background, hash, "a string", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := newReplicas(t, redisAddr, 1)
			ledger := rs[0].store.Ledger()
			var refunds atomic.Int32
			logs := &syncLog{}
			refund := toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
				refunds.Add(1)
				return "refunded", nil
			}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			if r := refund.Run(run.With(background, "run-bad", ledger), `{"order":"A-1001"}`); r.Status() != "ok" {
				t.Fatalf("the refund: %v", r.Kind())
			}
			tt.corrupt(t, rs[0], "{"+rs[0].prefix+":run:run-bad}")
			resumed := run.With(background, "run-bad", ledger)
			for i := range 2 {
				r := refund.Run(resumed, `{"order":"A-1001"}`)
				if r.Kind() != middleware.KindFailed || r.Failure.Retryable || !errors.Is(r.Failure, run.ErrCorrupt) || refunds.Load() != 1 {
					t.Fatalf("resumed, call %d: %v, retryable %v, %v, %d refunds; want tool-failed, not retryable, ErrCorrupt, not called again",
						i+1, r.Kind(), r.Failure.Retryable, r.Failure.Cause, refunds.Load())
				}
				if o := r.Observation(); !strings.Contains(o, "cannot be read") || !strings.Contains(o, "Do not call refund again") {
					t.Fatalf("the model is told %q", o)
				}
			}
			if n := logs.count("ERROR", "cannot be read"); n != 1 {
				t.Errorf("%d ERROR lines; want one", n)
			}
			if !rs[0].store.Available() || rs[0].store.Outages() != 0 {
				t.Errorf("available %v after %d outages; want corruption to be no outage", rs[0].store.Available(), rs[0].store.Outages())
			}
		})
	}
}

// setFields sets every field of the hash whose name begins with prefix to v.
func setFields(t *testing.T, r *replica, hash, prefix, v string) {
	t.Helper()
	fields, err := r.client.HGetAll(background, hash).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f := range fields {
		if strings.HasPrefix(f, prefix) {
			if err := r.client.HSet(background, hash, f, v).Err(); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no field %s* in %v", prefix, fields)
	}
}

// joinedLog is a log handler that tells, on joined, each call that waits
// for an identical call in flight (its DEBUG line).
type joinedLog chan struct{}

func (j joinedLog) Enabled(context.Context, slog.Level) bool { return true }
func (j joinedLog) WithAttrs([]slog.Attr) slog.Handler       { return j }
func (j joinedLog) WithGroup(string) slog.Handler            { return j }
func (j joinedLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "waits for it") {
		j <- struct{}{}
	}
	return nil
}

// Regression (issue 32, item 6, on Redis): an identical refund made while
// the first was in flight was sent twice. It waits for the first and
// replays its answer; the ledger keeps one entry.
func TestAnIdenticalCallInFlightIsMadeOnce(t *testing.T) {
	rs := newReplicas(t, redisAddr, 1)
	ledger := rs[0].store.Ledger()
	up := startKeyedUpstream(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	joined := make(joinedLog, 1)
	refund := toolsafe.Wrap(middleware.Func("refund", "", func(ctx context.Context, in string) (string, error) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
		up.mu.Lock()
		up.applied[middleware.IdempotencyKey(ctx)] = true
		up.mu.Unlock()
		return "refunded", nil
	}), toolsafe.WithSideEffects(middleware.SideEffectsWithKey), toolsafe.WithLogger(slog.New(joined)))
	ctx := run.With(background, "run-twice", ledger)
	first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
	go func() { first <- refund.Run(ctx, `{"order":"A-1001"}`) }()
	<-entered
	go func() { second <- refund.Run(ctx, `{"order": "A-1001"}`) }()
	select {
	case <-joined:
	case r := <-second:
		t.Fatalf("the identical call ended while the first was in flight: %v; want it to wait", r.Kind())
	}
	close(release)
	a, b := <-first, <-second
	if a.Status() != "ok" || b.Status() != "ok" || !b.Replayed || calls.Load() != 1 || up.count() != 1 {
		t.Fatalf("%v/%v, replayed %v, %d calls, %d applied; want one refund, the second replaying it",
			a.Kind(), b.Kind(), b.Replayed, calls.Load(), up.count())
	}
	if es, err := ledger.Entries(background, "run-twice"); err != nil || len(es) != 1 {
		t.Errorf("entries %+v, %v; want one", es, err)
	}
}

// outcomes are entries of a call that ended each way, by status.
var outcomes = map[run.Status]run.Entry{
	run.StatusAnswered: {Output: "refunded"},
	run.StatusUnknown:  {Kind: middleware.KindTimeout, SideEffectUnknown: true},
	run.StatusFailed:   {Kind: middleware.KindToolError},
	run.StatusOpen:     {Kind: middleware.KindApprovalRequired},
	run.StatusRefused:  {Kind: middleware.KindCallLimit},
}

// finishWrites is run.Ledger's machine as its doc states it: whether
// Finish with the outcome to, by the call holding the intent (own) or
// another, writes over an entry whose status is from.
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

func ended(e run.Entry, s run.Status) run.Entry {
	o := outcomes[s]
	e.Pending, e.Kind, e.SideEffectUnknown, e.Output = false, o.Kind, o.SideEffectUnknown, o.Output
	return e
}

// The ledger's scripts follow the machine of run.Ledger's doc, as the
// MemoryLedger does, for every status an entry can be in and every outcome
// a call can end with, from the call that holds the intent and another.
func TestTheLedgerScriptsFollowTheMachine(t *testing.T) {
	l := newReplicas(t, redisAddr, 1)[0].store.Ledger()
	statuses := []run.Status{run.StatusPending, run.StatusAnswered, run.StatusUnknown, run.StatusFailed, run.StatusOpen, run.StatusRefused}
	i := 0
	for _, from := range statuses {
		for to := range outcomes {
			for _, own := range []bool{true, false} {
				i++
				id, name := fmt.Sprint("r", i), fmt.Sprintf("%d to %d own %v", from, to, own)
				b, err := l.Begin(background, id, run.Entry{Tool: "refund", Input: "A-1", Key: "k", Claim: "c1"})
				if err != nil || !b.New {
					t.Fatalf("%s: begin %+v, %v", name, b, err)
				}
				if from != run.StatusPending {
					if f, err := l.Finish(background, id, ended(b.Entry, from)); err != nil || !f.Written {
						t.Fatalf("%s: the first Finish was not written: %v", name, err)
					}
				}
				e := ended(b.Entry, to)
				if !own {
					e.Claim = "c2"
				}
				f, err := l.Finish(background, id, e)
				want := finishWrites(from, to, own)
				if err != nil || f.Written != want {
					t.Errorf("%s: written %v, %v; want %v", name, f.Written, err, want)
				}
				if (f.Answer != nil) != (from == run.StatusAnswered) || f.Answer != nil && f.Answer.Output != "refunded" {
					t.Errorf("%s: answer %+v; want the standing answer only when one stands", name, f.Answer)
				}
				es, err := l.Entries(background, id)
				wantStatus := from
				if want {
					wantStatus = to
				}
				if err != nil || len(es) != 1 || es[0].Status() != wantStatus {
					t.Errorf("%s: entries %+v, %v; want one, %d", name, es, err, wantStatus)
				}
			}
		}
	}
}
