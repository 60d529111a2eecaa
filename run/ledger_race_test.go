package run_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/internal/testkit"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// syncBuffer is a log sink safe for the calls made at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// count is how many lines at level hold text.
func (s *syncBuffer) count(level, text string) int {
	n := 0
	for _, line := range strings.Split(s.String(), "\n") {
		if strings.Contains(line, "level="+level) && strings.Contains(line, text) {
			n++
		}
	}
	return n
}

// Regression (issue 32, item 3: the loser of a resume race reopens a call
// that already answered): two runs resumed from one pause at once (a job
// delivered twice, A and B). A, granted, refunds; B took over A's intent
// while it was pending and sends it again under its key, but its gate asks
// after A answered, finds no grant and pauses; B's Finish wrote its pause
// over A's answer, so the next resume, granted again by a person who saw
// B's pause, refunded a second time. A settled answer is never replaced:
// B replays A's answer, and a third resume replays it too.
func TestTheLoserOfAResumeRaceReplaysTheWinnersAnswer(t *testing.T) {
	for name, l := range map[string]run.Ledger{"memory": run.NewMemoryLedger()} {
		t.Run(name, func(t *testing.T) { resumeRace(t, l, l) })
	}
}

// resumeRace runs the race of TestTheLoserOfAResumeRaceReplaysTheWinnersAnswer
// with run A on ledger a and run B on ledger b (two replicas' views of one
// store).
func resumeRace(t *testing.T, a, b run.Ledger) {
	var refunds atomic.Int32
	inA, bAsks, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	grants := approval.NewGrants()
	var asked atomic.Int32
	approver := approval.ApproverFunc(func(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
		if asked.Add(1) == 3 { // run B's gate: it asks once A has answered
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

	r := refund.Run(run.With(context.Background(), "run-race-"+t.Name(), a), `{"order":"A-1001"}`)
	ar, ok := r.Failure.Cause.(*approval.Required)
	if !ok {
		t.Fatalf("%v; want a pause", r.Kind())
	}
	grants.Grant(ar.Tool, ar.Input)
	won := make(chan middleware.Result)
	go func() {
		r := refund.Run(run.Resume(run.With(context.Background(), "", a), ar), ar.Input)
		close(aDone)
		won <- r
	}()
	<-inA
	lost := refund.Run(run.Resume(run.With(context.Background(), "", b), ar), ar.Input)
	if r := <-won; r.Status() != "ok" || r.Replayed {
		t.Fatalf("run A: %v %q; want it to refund", r.Kind(), r.Observation())
	}
	if lost.Status() != "ok" || !lost.Replayed || lost.Output != "refunded 900 EUR" {
		t.Fatalf("run B: %v %q, replayed %v; want A's answer replayed, not a pause", lost.Kind(), lost.Observation(), lost.Replayed)
	}
	grants.Grant(ar.Tool, ar.Input) // a person approves once more
	third := refund.Run(run.Resume(run.With(context.Background(), "", a), ar), ar.Input)
	if !third.Replayed || refunds.Load() != 1 {
		t.Fatalf("a third resume: %v %q, replayed %v, %d refunds; want A's answer replayed and one refund",
			third.Kind(), third.Observation(), third.Replayed, refunds.Load())
	}
}

// lostBegins is a MemoryLedger whose Begin, while lose is set, records
// the intent and loses the reply, as a Redis client whose timeout passed
// while the script ran.
type lostBegins struct {
	*run.MemoryLedger
	lose atomic.Bool
}

func (l *lostBegins) Begin(ctx context.Context, runID string, e run.Entry) (run.Begun, error) {
	b, err := l.MemoryLedger.Begin(ctx, runID, e)
	if l.lose.Load() {
		return run.Begun{}, errors.New("i/o timeout")
	}
	return b, err
}

// Regression (issue 32, item 4: a lost reply to Begin turns a call never
// made into "outcome unknown"): Begin recorded the refund's intent but its
// reply was lost; the model, told "temporarily unavailable, try again",
// tried again, and the refund, which sends no idempotency key, was refused
// with "may have been applied … check first", though it was never called.
// The pending intent under the caller's own claim is its own unmade call:
// the retry makes it, once, counted once. Another run that finds it (a
// replica resumed after this one crashed) still cannot know: to it the
// outcome is unknown.
func TestALostReplyToBeginIsNotAnUnknownOutcome(t *testing.T) {
	var refunds atomic.Int32
	refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithoutKey),
		toolsafe.WithCallLimits(run.Limits{Identical: 1}))
	l := &lostBegins{MemoryLedger: run.NewMemoryLedger()}
	ctx := run.With(context.Background(), "run-lost", l)

	l.lose.Store(true)
	r := refund.Run(ctx, `{"order":"A-1001"}`)
	if r.Kind() != middleware.KindBusy || !r.Failure.Retryable || refunds.Load() != 0 ||
		!strings.Contains(r.Observation(), "Try again in a moment") {
		t.Fatalf("the lost reply: %v, retryable %v, %d refunds, %q; want tool-busy, retryable, not called, try again",
			r.Kind(), r.Failure.Retryable, refunds.Load(), r.Observation())
	}
	l.lose.Store(false)
	r = refund.Run(ctx, `{"order":"A-1001"}`)
	if r.Status() != "ok" || refunds.Load() != 1 {
		t.Fatalf("the model tries again: %v %q, %d refunds; want the refund made once", r.Kind(), r.Observation(), refunds.Load())
	}
	es, _ := l.Entries(ctx, "run-lost")
	if len(es) != 1 || es[0].Status() != run.StatusAnswered {
		t.Errorf("entries %+v; want the one refund, answered", es)
	}

	// Another run's pending intent is no call of this one's.
	l.lose.Store(true)
	refund.Run(run.With(context.Background(), "run-crashed", l), `{"order":"A-1002"}`)
	l.lose.Store(false)
	r = refund.Run(run.With(context.Background(), "run-crashed", l), `{"order":"A-1002"}`)
	if refunds.Load() != 1 || r.Failure == nil || r.Failure.SideEffect != middleware.SideEffectUnknown {
		t.Fatalf("another scope of the run: %q, %d refunds; want its outcome unknown, not sent", r.Observation(), refunds.Load())
	}
}

// corrupting is a ledger (a user's store, say) that cannot read the
// entries of one input: its Begin says so with run.ErrCorrupt, or, with
// wrong set, answers with another call's entry.
type corrupting struct {
	*run.MemoryLedger
	input string
	wrong bool
}

func (l *corrupting) Begin(ctx context.Context, runID string, e run.Entry) (run.Begun, error) {
	if e.Input != l.input {
		return l.MemoryLedger.Begin(ctx, runID, e)
	}
	if l.wrong {
		e.Input, e.Kind = `{"order":"A-9"}`, middleware.KindFailed
		return run.Begun{Entry: e}, nil
	}
	return run.Begun{}, fmt.Errorf("sqlstore: entry 0 of run %s: invalid JSON: %w", runID, run.ErrCorrupt)
}

// Regression (issue 32, item 5: a corrupt ledger entry reads "temporarily
// unavailable, try again in a moment", forever, and the loop guard never
// counts it). Corruption is not an outage: the call is not made, the model
// is told not to repeat it, the program finds run.ErrCorrupt, it is logged
// once at ERROR, and the loop guard counts it as failed for good. And
// Failure.Retryable agrees with what the model is told for every store
// condition: an outage is retryable ("try again in a moment"), corruption
// is not.
func TestACorruptLedgerEntryIsNotAnOutage(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		t.Run(fmt.Sprint("another call's entry ", wrong), func(t *testing.T) {
			var refunds atomic.Int32
			logs := &syncBuffer{}
			l := &corrupting{MemoryLedger: run.NewMemoryLedger(), input: `{"order":"A-1"}`, wrong: wrong}
			opts := []toolsafe.Option{toolsafe.WithSideEffects(middleware.SideEffectsWithKey),
				toolsafe.WithCallLimits(run.Limits{Total: 3}), toolsafe.WithLogger(slog.New(slog.NewTextHandler(logs, nil)))}
			refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), opts...)
			ctx := run.With(context.Background(), "run-corrupt", l)
			for i := range 2 {
				r := refund.Run(ctx, `{"order":"A-1"}`)
				if r.Kind() != middleware.KindFailed || r.Failure.Retryable || !errors.Is(r.Failure, run.ErrCorrupt) || refunds.Load() != 0 {
					t.Fatalf("call %d: %v, retryable %v, cause %v, %d refunds; want tool-failed, not retryable, ErrCorrupt, not called",
						i+1, r.Kind(), r.Failure.Retryable, r.Failure.Cause, refunds.Load())
				}
				if o := r.Observation(); !strings.Contains(o, "refund was not called") || !strings.Contains(o, "cannot be read") ||
					!strings.Contains(o, "Do not call refund again with this input") || strings.Contains(o, "try again") {
					t.Fatalf("the model is told %q", o)
				}
			}
			if n := logs.count("ERROR", "cannot be read"); n != 1 {
				t.Errorf("%d ERROR lines; want the corruption said once:\n%s", n, logs)
			}
			// The two calls count: with Total 3, one more call is made, and
			// the next is refused.
			if r := refund.Run(ctx, `{"order":"A-2"}`); r.Status() != "ok" {
				t.Fatalf("another refund: %v %q", r.Kind(), r.Observation())
			}
			if r := refund.Run(ctx, `{"order":"A-3"}`); r.Kind() != middleware.KindCallLimit ||
				!strings.Contains(r.Observation(), "already made 3 tool calls") {
				t.Fatalf("the fourth call: %v %q; want refused, counting the corrupt calls", r.Kind(), r.Observation())
			}
		})
	}
	t.Run("an outage is retryable", func(t *testing.T) {
		var refunds atomic.Int32
		refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
		r := refund.Run(run.With(context.Background(), "down", failingLedger{}), `{"order":"A-1"}`)
		if r.Kind() != middleware.KindBusy || !r.Failure.Retryable || !strings.Contains(r.Observation(), "Try again in a moment") {
			t.Fatalf("%v, retryable %v, %q; want tool-busy, retryable, and the model told to try again", r.Kind(), r.Failure.Retryable, r.Observation())
		}
	})
}

// joinSignal is a log handler that tells, on joined, each call that found
// an identical call in flight and waits for it (its DEBUG line).
type joinSignal struct{ joined chan string }

func newJoinSignal() *joinSignal { return &joinSignal{joined: make(chan string, 16)} }

func (j *joinSignal) Enabled(context.Context, slog.Level) bool { return true }
func (j *joinSignal) WithAttrs([]slog.Attr) slog.Handler       { return j }
func (j *joinSignal) WithGroup(string) slog.Handler            { return j }
func (j *joinSignal) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "waits for it") {
		id := ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "call_id" {
				id = a.Value.String()
			}
			return true
		})
		j.joined <- id
	}
	return nil
}

// waitJoined waits until the call whose result comes on second says it
// waits for the identical call in flight, and fails t if it ends first.
func waitJoined(t *testing.T, j *joinSignal, second chan middleware.Result) {
	t.Helper()
	select {
	case <-j.joined:
	case r := <-second:
		t.Fatalf("the identical call ended while the first was in flight: %v %q; want it to wait for the first", r.Kind(), r.Observation())
	}
}

// Regression (issue 32, item 6: an identical call made while the first is
// still running runs twice; adk-java#285): a model that calls a slow tool
// again before the first call answered sent the refund twice. Within a
// run, an identical call (the same tool and canonical input) made while
// the first is in flight waits for it and shares its outcome, as a
// replay, and the loop guard counts one call; an identical call made
// after the first ended is a new call (the ledger's n-th entry).
func TestAnIdenticalCallInFlightIsMadeOnce(t *testing.T) {
	// held is a refund whose first call waits in the tool until release.
	type held struct {
		refunds          atomic.Int32
		entered, release chan struct{}
		signal           *joinSignal
		tool             *toolsafe.Tool
	}
	newRefund := func(opts ...toolsafe.Option) *held {
		h := &held{entered: make(chan struct{}), release: make(chan struct{}), signal: newJoinSignal()}
		h.tool = toolsafe.Wrap(middleware.Func("refund", "", func(context.Context, string) (string, error) {
			if h.refunds.Add(1) == 1 {
				close(h.entered)
				<-h.release
			}
			return "refunded", nil
		}), append(opts, toolsafe.WithLogger(slog.New(h.signal)))...)
		return h
	}
	keyed := toolsafe.WithSideEffects(middleware.SideEffectsWithKey)

	t.Run("the identical call shares the answer, as a replay its span names", func(t *testing.T) {
		tr := testkit.NewRecorder(t)
		hook, rec := tr.Hook, tr.Spans
		h := newRefund(keyed, toolsafe.WithCallLimits(run.Limits{Identical: 1}), toolsafe.WithTracing(hook))
		ctx := run.With(context.Background(), "", nil)
		first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
		go func() { first <- h.tool.Run(ctx, `{"order":"A-1","eur":900}`) }()
		<-h.entered
		go func() { second <- h.tool.Run(ctx, `{"eur":900, "order":"A-1"}`) }() // the same JSON
		waitJoined(t, h.signal, second)
		close(h.release)
		a, b := <-first, <-second
		if a.Status() != "ok" || a.Replayed || b.Status() != "ok" || !b.Replayed || b.Output != "refunded" ||
			b.Attempts != 0 || h.refunds.Load() != 1 {
			t.Fatalf("first %v replayed %v, second %v %q replayed %v, %d refunds; want one refund, the second replaying it",
				a.Kind(), a.Replayed, b.Kind(), b.Observation(), b.Replayed, h.refunds.Load())
		}
		span := testkit.SpanNamed(rec.Ended(), "replay_tool refund")
		var summary string
		if span != nil {
			v, _ := testkit.Attr(span.Attributes(), "toolsafe.summary")
			summary = v.AsString()
		}
		if span == nil || !strings.Contains(summary, "the identical call "+a.CallID+" was in flight") {
			t.Fatalf("want the second's replay_tool span to name the call it joined, %s; got %v", a.CallID, span)
		}
		// The loop guard counted one call: a third identical call, made
		// after both ended, is a new one, past Identical 1.
		if r := h.tool.Run(ctx, `{"order":"A-1","eur":900}`); r.Kind() != middleware.KindCallLimit || h.refunds.Load() != 1 {
			t.Fatalf("a third: %v %q; want refused by the loop guard, once called", r.Kind(), r.Observation())
		}
	})
	t.Run("the first pauses: the identical call pauses too, under its own call ID", func(t *testing.T) {
		asked, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		approver := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
			once.Do(func() { close(asked) })
			<-release
			return approval.Pending, nil
		})
		var refunds atomic.Int32
		signal := newJoinSignal()
		refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), toolsafe.WithApproval(approver, approval.ApproveEachAttempt),
			toolsafe.WithLogger(slog.New(signal)))
		ctx := run.With(context.Background(), "", nil)
		first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
		go func() { first <- refund.Run(ctx, `{"order":"A-1"}`) }()
		<-asked
		go func() { second <- refund.Run(ctx, `{"order":"A-1"}`) }()
		waitJoined(t, signal, second)
		close(release)
		a, b := <-first, <-second
		var a1, a2 *approval.Required
		if !errors.As(a.Failure, &a1) || !errors.As(b.Failure, &a2) || refunds.Load() != 0 {
			t.Fatalf("%v, %v, %d refunds; want both paused, nothing refunded", a.Kind(), b.Kind(), refunds.Load())
		}
		if a2.CallID != b.CallID || a2.CallID == a1.CallID || a2.IdempotencyKey != a1.IdempotencyKey || a2.RunID != a1.RunID {
			t.Fatalf("the second's pause %+v, the first's %+v; want the same pause under the second's call ID", a2, a1)
		}
	})
	t.Run("the waiting call's caller gives up: it ends, the first goes on", func(t *testing.T) {
		h := newRefund(keyed)
		ctx := run.With(context.Background(), "", nil)
		gone, cancel := context.WithCancel(ctx)
		first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
		go func() { first <- h.tool.Run(ctx, `{"order":"A-1"}`) }()
		<-h.entered
		go func() { second <- h.tool.Run(gone, `{"order":"A-1"}`) }()
		waitJoined(t, h.signal, second)
		cancel()
		if r := <-second; r.Kind() != middleware.KindCanceled {
			t.Fatalf("the waiting call: %v; want canceled", r.Kind())
		}
		close(h.release)
		if r := <-first; r.Status() != "ok" || h.refunds.Load() != 1 {
			t.Fatalf("the first: %v, %d refunds; want it to refund, once", r.Kind(), h.refunds.Load())
		}
	})
	t.Run("the first's caller gives up before it is made: the waiting call makes it", func(t *testing.T) {
		var refunds atomic.Int32
		asked := make(chan struct{}, 2)
		grants := approval.NewGrants()
		grants.Grant("refund", `{"order":"A-1"}`)
		var decides atomic.Int32
		approver := approval.ApproverFunc(func(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
			if decides.Add(1) == 1 { // the first waits for a person, until its caller gives up
				asked <- struct{}{}
				<-ctx.Done()
				return approval.Pending, ctx.Err()
			}
			return grants.Decide(ctx, c)
		})
		signal := newJoinSignal()
		refund := toolsafe.Wrap(counted("refund", &refunds, nil, nil), toolsafe.WithApproval(approver), keyed,
			toolsafe.WithLogger(slog.New(signal)))
		ctx := run.With(context.Background(), "", nil)
		gone, cancel := context.WithCancel(ctx)
		first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
		go func() { first <- refund.Run(gone, `{"order":"A-1"}`) }()
		<-asked
		go func() { second <- refund.Run(ctx, `{"order":"A-1"}`) }()
		waitJoined(t, signal, second)
		cancel()
		if r := <-first; r.Kind() != middleware.KindCanceled {
			t.Fatalf("the first: %v; want canceled", r.Kind())
		}
		if r := <-second; r.Status() != "ok" || r.Replayed || refunds.Load() != 1 {
			t.Fatalf("the second: %v %q, %d refunds; want it made, once", r.Kind(), r.Observation(), refunds.Load())
		}
	})
	t.Run("a tool without side effects is joined too", func(t *testing.T) {
		h := newRefund() // only reads
		ctx := run.With(context.Background(), "", nil)
		first, second := make(chan middleware.Result, 1), make(chan middleware.Result, 1)
		go func() { first <- h.tool.Run(ctx, `{"order":"A-1"}`) }()
		<-h.entered
		go func() { second <- h.tool.Run(ctx, `{"order":"A-1"}`) }()
		waitJoined(t, h.signal, second)
		close(h.release)
		if a, b := <-first, <-second; a.Status() != "ok" || b.Status() != "ok" || !b.Replayed || h.refunds.Load() != 1 {
			t.Fatalf("%v/%v, replayed %v, %d calls; want one call, shared", a.Kind(), b.Kind(), b.Replayed, h.refunds.Load())
		}
	})
	t.Run("an identical call after the first ended is a new call", func(t *testing.T) {
		h := newRefund(keyed)
		close(h.release)
		ctx := run.With(context.Background(), "", nil)
		for range 2 {
			if r := h.tool.Run(ctx, `{"order":"A-1"}`); r.Status() != "ok" || r.Replayed {
				t.Fatalf("%v replayed %v; want each call made", r.Kind(), r.Replayed)
			}
		}
		if h.refunds.Load() != 2 {
			t.Fatalf("%d refunds; want two calls, one after the other", h.refunds.Load())
		}
	})
	t.Run("calls outside a run, or of another input, are not joined", func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			ctx      context.Context
			in1, in2 string
		}{
			{"outside a run", context.Background(), `{"order":"A-1"}`, `{"order":"A-1"}`},
			{"another input", run.With(context.Background(), "", nil), `{"order":"A-1"}`, `{"order":"A-2"}`},
		} {
			h := newRefund(keyed)
			first := make(chan middleware.Result, 1)
			go func() { first <- h.tool.Run(tt.ctx, tt.in1) }()
			<-h.entered
			second := h.tool.Run(tt.ctx, tt.in2) // made while the first is held
			close(h.release)
			if a := <-first; a.Status() != "ok" || second.Status() != "ok" || second.Replayed || h.refunds.Load() != 2 {
				t.Fatalf("%s: %v/%v, replayed %v, %d refunds; want two calls", tt.name, a.Kind(), second.Kind(), second.Replayed, h.refunds.Load())
			}
		}
	})
}
