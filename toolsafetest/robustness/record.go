package robustness

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/run"
)

// history is every store operation of a run of Check, with when it was
// asked and when it answered, in nanoseconds since the run began.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	lost  int // operations whose reply the kit itself lost
	rng   *rand.Rand
	lose  float64
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

// delay holds an operation back a moment before it reaches the store, as
// a network and a busy store do: long enough for other replicas' calls to
// come between a call's steps.
func delay() { time.Sleep(time.Duration(rand.IntN(700)) * time.Microsecond) }

func (h *history) add(client int, in opInput, out opOutput, call int64) {
	ret := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// loses reports whether the kit loses the reply of an operation that was
// applied (Config.LoseReplies).
func (h *history) loses() bool {
	if h.lose <= 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rng.Float64() < h.lose {
		h.lost++
		return true
	}
	return false
}

// errLost is the error of an operation whose reply the kit lost.
var errLost = errors.New("robustness: the reply was lost (injected)")

// errKilled is the error of a Finish a killed replica never sent.
var errKilled = errors.New("robustness: the replica was killed before it recorded the outcome (injected)")

// killKey carries, in a call's context, the flag its upstream sets when it
// applied the effect of a call whose replica is then killed.
type killKey struct{}

// ledger records every operation on a replica's Ledger.
type ledger struct {
	inner  run.Ledger
	h      *history
	client int
}

func (l *ledger) Begin(ctx context.Context, runID string, e run.Entry) (run.Begun, error) {
	call := l.h.now()
	delay()
	b, err := l.inner.Begin(ctx, runID, e)
	if err == nil && l.h.loses() {
		err = errLost
	}
	l.h.add(l.client, opInput{kind: opBegin, part: "run " + runID, entry: e}, opOutput{lost: err != nil, begun: b}, call)
	return b, err
}

func (l *ledger) Finish(ctx context.Context, runID string, e run.Entry) (run.Finished, error) {
	if k, _ := ctx.Value(killKey{}).(*kill); k != nil && k.applied.Load() {
		return run.Finished{}, errKilled // never sent: not in the history
	}
	call := l.h.now()
	delay()
	f, err := l.inner.Finish(ctx, runID, e)
	if err == nil && l.h.loses() {
		err = errLost
	}
	l.h.add(l.client, opInput{kind: opFinish, part: "run " + runID, entry: e}, opOutput{lost: err != nil, finished: f}, call)
	return f, err
}

func (l *ledger) Holds(ctx context.Context, runID string) (bool, error) {
	return l.inner.Holds(ctx, runID)
}

// grants records every operation on a replica's Grants.
type grants struct {
	inner  Grants
	h      *history
	client int
}

func grantPart(tool, input string) string {
	canon, err := canonical.JSON(input)
	if err != nil {
		canon = input
	}
	return "grants " + tool + "\x00" + canon
}

func (g *grants) Decide(ctx context.Context, c approval.CallInfo) (approval.Decision, error) {
	call := g.h.now()
	delay()
	d, err := g.inner.Decide(ctx, c)
	if err == nil && g.h.loses() {
		err = errLost
	}
	g.h.add(g.client, opInput{kind: opDecide, part: grantPart(c.Tool, c.Input), asked: c.AnsweredAs()}, opOutput{lost: err != nil, decision: d}, call)
	if err != nil {
		return approval.Pending, err
	}
	return d, nil
}

func (g *grants) Grant(ctx context.Context, tool, input string) error {
	call := g.h.now()
	err := g.inner.Grant(ctx, tool, input)
	if err == nil && g.h.loses() {
		err = errLost
	}
	g.h.add(g.client, opInput{kind: opGrant, part: grantPart(tool, input)}, opOutput{lost: err != nil}, call)
	return err
}

func (g *grants) Answer(ctx context.Context, r approval.Request, d approval.Decision) error {
	call := g.h.now()
	_, err := g.inner.Answer(ctx, r.ID, d, "robustness", "")
	if err == nil && g.h.loses() {
		err = errLost
	}
	notPending := errors.Is(err, approval.ErrNotPending)
	g.h.add(g.client, opInput{kind: opAnswer, part: grantPart(r.Call.Tool, r.Call.Input), decision: d, request: r.Call.RequestKey()},
		opOutput{lost: err != nil && !notPending, notPending: notPending}, call)
	return err
}
