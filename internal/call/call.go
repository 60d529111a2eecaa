// Package call is the record of one logical tool call: its ID, its
// idempotency key, its attempts and the facts the layers record as events
// (Record), told to observers (Observe, otelhook's spans); FailureOf and
// Call.Result build the call's outcome from them. Each concern keeps its own
// state on the record under its own key (Value, SetValue).
package call

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/internal/callkey"
	"github.com/toolsafe/toolsafe/middleware"
)

// Call is the record of one logical tool call: every attempt, wait and
// fallback of it. Begin starts one per call and puts it in the context;
// layers record what they see with Record, observers learn it with Observe,
// and Surface builds the call's Failure from it. Its methods are safe for
// concurrent use; a nil *Call answers as a call with no record.
type Call struct {
	ctx     callCtx // the context that carries the call: one allocation for both
	tool    string
	idKnown bool
	start   time.Time
	logger  *slog.Logger
	scope   Scope // the run the call is part of, or nil
	parent  *Call // the call whose context this one was begun on, or nil

	idOnce sync.Once
	id     string // made on first use when not the model's

	keyOnce  sync.Once
	key      string // made on first use: most calls never ask for it
	keyFixed bool   // key is set for good; c.mu guards it

	mu        sync.Mutex
	attempts  int
	checkedBy any    // the checker that found checkedIn valid (see Checked)
	checkedIn string // an input found valid
	failure   *middleware.Failure
	extra     *callFacts // what only some calls record; nil until one does
	observers []Observer
	firstObs  [2]Observer // the observers' first room: a traced call has two
}

// callFacts is what only some calls record: waits, retries that stopped,
// fallbacks, approvals, a run's entries. A call that answers at its first
// attempt never allocates it, so an in-flight call holds little memory.
type callFacts struct {
	delays     []time.Duration
	abandoned  int
	sideEffect middleware.SideEffect
	waiting    string
	waitingDep string
	stopped    bool
	stopWait   time.Duration
	deadline   time.Duration
	fallback   string
	primary    *middleware.Failure
	altFailure *middleware.Failure
	altSkipped string
	changed    string // the note of a person's changes (ChangedByPerson)
	replayed   bool
	values     map[any]any // each concern's own state, under its own key (see Value)
	// The canonical form of an input (see Canonical), made once for the
	// layers that match calls: the gate, the run ledger, the loop guard.
	canonIn, canonOut string
	canonErr          error
	canonSet          bool
}

// noFacts is what a call that recorded none of them reads: never written.
var noFacts callFacts

// readExtra returns the facts only some calls record, to read; c.mu is
// held. A call that recorded none reads noFacts.
func (c *Call) readExtra() *callFacts {
	if c.extra == nil {
		return &noFacts
	}
	return c.extra
}

// writeExtra returns the facts only some calls record, to write, making
// them on first use; c.mu is held.
func (c *Call) writeExtra() *callFacts {
	if c.extra == nil {
		c.extra = &callFacts{}
	}
	return c.extra
}

// facts is what the layers recorded on a call, as buildFailure needs it.
type facts struct {
	attempts   int
	elapsed    time.Duration
	sideEffect middleware.SideEffect
	waiting    string
	waitingDep string
	stopped    bool
	stopWait   time.Duration
	deadline   time.Duration
	altFailure *middleware.Failure
	altSkipped string
	changed    string
}

// Begin starts the record of one call to tool with input and puts it in the
// returned context. id is the model's tool-call ID (gen_ai.tool.call.id), or
// "" to make one up: "call_" and 16 hex digits, unique within the process
// and unlikely to repeat across processes. logger is the call's logger; nil
// means slog.Default(). When ctx resumes a paused call of tool with the
// same input (see package run's Resume), the new record continues it: it
// takes over its idempotency key, and its call ID unless id is given.
//
// toolsafe.Tool starts a record for every call; a stack built by hand gets
// one from its first layer that needs it (Surface, Gate, otelhook's call
// span).
func Begin(ctx context.Context, tool, id, input string, logger *slog.Logger) (context.Context, *Call) {
	c := &Call{tool: tool, id: id, idKnown: id != "", start: time.Now(), logger: logger, parent: From(ctx)}
	if s, ok := ctx.Value(ScopeKey{}).(Scope); ok && s != nil {
		c.scope = s
		if k, ok := s.Continue(tool, input); ok {
			c.key, c.keyFixed = k.Key, true
			if !c.idKnown {
				c.id = k.CallID
			}
			if k.Sends != "" {
				c.SetSends(k.Sends)
			}
		}
	}
	c.ctx = callCtx{Context: ctx, c: c}
	return &c.ctx, c
}

// callCtx is the context that carries a call record: ctx with the record
// under callkey.Call, as context.WithValue would make it. It is a field of
// the record (Call.ctx), so that starting a call allocates once, not twice;
// read it as a context, never as the record.
type callCtx struct {
	context.Context
	c *Call
}

func (cc *callCtx) Value(key any) any {
	if key == (callkey.Call{}) {
		return cc.c
	}
	return cc.Context.Value(key)
}

// Ensure returns ctx's record when it is a call of tool, else starts one: a
// layer of a stack built by hand, or called on another call's context (an
// alternative tool, a tool called by a tool), gets a record of its own.
func Ensure(ctx context.Context, tool, input string) (context.Context, *Call) {
	if c := From(ctx); c != nil && c.tool == tool {
		return ctx, c
	}
	return Begin(ctx, tool, "", input, nil)
}

// Self returns c as a value for LimitCause.Call: nil, not a typed
// nil, when c is nil, so that it compares equal to a context without a
// call.
func (c *Call) Self() any {
	if c == nil {
		return nil
	}
	return c
}

// Tool is the name of the tool called.
func (c *Call) Tool() string {
	if c == nil {
		return ""
	}
	return c.tool
}

// ID is the call ID: the model's tool-call ID when known
// (gen_ai.tool.call.id), else one made up by Begin.
func (c *Call) ID() string {
	if c == nil {
		return ""
	}
	c.idOnce.Do(func() {
		if c.id == "" {
			c.id = newCallID()
		}
	})
	return c.id
}

// IDKnown reports whether the ID is the model's tool-call ID, given to
// Begin, rather than made up.
func (c *Call) IDKnown() bool { return c != nil && c.idKnown }

// Key is the idempotency key, the same for every attempt of this call: 32
// hex digits from crypto/rand, made on first use. Send it as the
// Idempotency-Key HTTP header so the upstream applies a side effect once.
func (c *Call) Key() string {
	if c == nil {
		return ""
	}
	c.keyOnce.Do(func() {
		c.mu.Lock()
		if c.key == "" {
			c.key = RandomHex(16)
		}
		c.keyFixed = true
		c.mu.Unlock()
	})
	return c.key
}

// Logger is the call's logger: the one given to Begin, else slog.Default().
func (c *Call) Logger() *slog.Logger {
	if c == nil || c.logger == nil {
		return slog.Default()
	}
	return c.logger
}

// Start is when the call began.
func (c *Call) Start() time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.start
}

// Attempts is the number of attempts begun so far: the attempt timeout
// begins each one as the tool is called, so a layer can tell whether the
// tool was called by comparing it before and after.
func (c *Call) Attempts() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// Result builds the Result of the call, which returned output and err: its
// Failure is the one Surface built, or, when no Surface saw err, built now
// the same way (see FailureOf).
func (c *Call) Result(ctx context.Context, output string, err error) middleware.Result {
	c.mu.Lock()
	f := c.failure
	c.mu.Unlock()
	if f == nil && err != nil {
		f = c.Settle(ctx, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := middleware.Result{
		Tool:      c.tool,
		CallID:    c.ID(),
		Attempts:  c.attempts,
		Elapsed:   time.Since(c.start),
		Fallback:  c.readExtra().fallback,
		Abandoned: c.readExtra().abandoned,
		Failure:   f,
		Primary:   c.readExtra().primary,
		Replayed:  c.readExtra().replayed,
	}
	if len(c.readExtra().delays) > 0 {
		r.Delays = append([]time.Duration(nil), c.readExtra().delays...)
	}
	if f == nil {
		r.Output = output
	}
	return r
}

// Observation is what the model sees of the call, which returned output
// and a nil error through Surface: Result(...).Observation() without
// building the rest of the Result.
func (c *Call) Observation(output string) string {
	c.mu.Lock()
	r := middleware.Result{Tool: c.tool, Output: output, Fallback: c.readExtra().fallback, Failure: c.failure}
	c.mu.Unlock()
	if r.Failure != nil {
		r.Output = ""
	}
	return r.Observation()
}

// Settle builds the call's Failure from err and what was recorded, keeps it
// and returns it. The first one built stands.
func (c *Call) Settle(ctx context.Context, err error) *middleware.Failure {
	f := buildFailure(ctx, c.facts(), c.tool, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure == nil {
		c.failure = f
	}
	return c.failure
}

func (c *Call) facts() facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return facts{
		attempts:   c.attempts,
		elapsed:    time.Since(c.start),
		sideEffect: c.readExtra().sideEffect,
		waiting:    c.readExtra().waiting,
		waitingDep: c.readExtra().waitingDep,
		stopped:    c.readExtra().stopped,
		stopWait:   c.readExtra().stopWait,
		deadline:   c.readExtra().deadline,
		altFailure: c.readExtra().altFailure,
		altSkipped: c.readExtra().altSkipped,
		changed:    c.readExtra().changed,
	}
}

// Record adds e, a fact about the call in ctx, to its record and tells the
// call's observers, on this goroutine, once the record is unlocked. It does
// nothing when ctx carries no call. The layers of toolsafe record their
// events; a middleware of your own may record them too.
func Record(ctx context.Context, e Event) {
	c := From(ctx)
	if c == nil {
		return
	}
	if rs, ok := e.(RetryScheduled); ok && Enabled(ctx, c, slog.LevelDebug) {
		kind, _ := middleware.Classify(rs.Err)
		DebugLog(ctx, c, "toolsafe: retrying", "attempt", rs.Attempt, "kind", string(kind),
			"delay", rs.Delay, "ended_by", AttemptCutText(ctx, rs.Err), "error", ErrorText(rs.Err))
	}
	c.Record(e)
}

// Record adds e to the record and tells the call's observers (see the
// function Record, which also logs).
func (c *Call) Record(e Event) {
	if c == nil {
		return
	}
	c.mu.Lock()
	switch e := e.(type) {
	case RetryScheduled:
		c.writeExtra().delays = append(c.writeExtra().delays, e.Delay)
	case RetriesStopped:
		c.writeExtra().stopped, c.writeExtra().stopWait = true, e.Wait
	case DeadlinePassed:
		c.writeExtra().deadline = e.Deadline
	case Waiting:
		c.writeExtra().waiting, c.writeExtra().waitingDep = e.For, e.Dependency
	case AttemptAbandoned:
		c.writeExtra().abandoned++
	case FallbackRouted:
		c.writeExtra().fallback, c.writeExtra().primary = e.To, e.Primary
	case FallbackFailed:
		c.writeExtra().altFailure = e.Failure
	case FallbackSkipped:
		c.writeExtra().altSkipped = e.To
	case ChangedByPerson:
		c.writeExtra().changed = e.Note
	case Replayed:
		c.writeExtra().replayed, c.writeExtra().fallback = true, e.Fallback
	}
	obs := c.observers
	c.mu.Unlock()
	for _, o := range obs {
		o.OnEvent(e)
	}
}

// Observe adds o to the observers of the call in ctx: it is told every
// event recorded from now on. A nil o, or a ctx with no call, is ignored.
func Observe(ctx context.Context, o Observer) {
	From(ctx).observe(o)
}

func (c *Call) observe(o Observer) {
	if c == nil || o == nil {
		return
	}
	c.mu.Lock()
	if c.observers == nil {
		c.observers = c.firstObs[:0:len(c.firstObs)] // a traced call has two: no allocation
	}
	// Appending never changes the elements a notifier copied out before.
	c.observers = append(c.observers, o)
	c.mu.Unlock()
}

// BeginAttempt counts a new attempt and returns its number, 1-based.
func (c *Call) BeginAttempt() int {
	if c == nil {
		return 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	return c.attempts
}

// MarkSideEffectUnknown records that an attempt of the call may have been
// applied.
func (c *Call) MarkSideEffectUnknown() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.writeExtra().sideEffect = middleware.SideEffectUnknown
	c.mu.Unlock()
}

// Continue makes the call continue an earlier one of a run, whose
// action may have been applied: it takes over its idempotency key (unless
// the key was asked for already) and starts with its side effect unknown.
func (c *Call) Continue(key string) {
	if c == nil {
		return
	}
	c.AdoptKey(key)
	c.MarkSideEffectUnknown()
}

// Canonical returns canonical.JSON(input), made once per call for the
// same input (an alternative's input is another).
func (c *Call) Canonical(input string) (string, error) {
	if c == nil {
		return canonical.JSON(input)
	}
	c.mu.Lock()
	if x := c.readExtra(); x.canonSet && x.canonIn == input {
		out, err := x.canonOut, x.canonErr
		c.mu.Unlock()
		return out, err
	}
	c.mu.Unlock()
	out, err := canonical.JSON(input)
	c.mu.Lock()
	x := c.writeExtra()
	x.canonIn, x.canonOut, x.canonErr, x.canonSet = input, out, err, true
	c.mu.Unlock()
	return out, err
}

// FallbackName is the alternative the call was routed to, or "".
func (c *Call) FallbackName() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readExtra().fallback
}

// MayHaveApplied reports whether an attempt of the call may have been
// applied.
func (c *Call) MayHaveApplied() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readExtra().sideEffect == middleware.SideEffectUnknown
}

// From returns the call record in ctx, or nil when ctx carries none (the
// tool was called without toolsafe).
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(callkey.Call{}).(*Call)
	return c
}
