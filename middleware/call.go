package middleware

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Call is the record of one logical tool call: every attempt, wait and
// fallback of it. toolsafe creates one per call and carries it in the
// context; layers read and update it. Its methods are safe for concurrent use.
type Call struct {
	tool    string
	id      string
	idKnown bool
	start   time.Time

	keyOnce sync.Once
	key     string // made on first use: most calls never ask for it

	mu        sync.Mutex
	attempts  int
	delays    []time.Duration
	abandoned int
	fallback  string
	failure   *Failure
	observers []CallObserver
	obsBuf    [2]CallObserver // observers' first backing array: a traced call has two
	logger    *slog.Logger

	// Written by GuardSideEffects and Gate, under mu.
	sideEffect       SideEffect
	approved         bool
	awaitingApproval bool
}

// Observer is told what happens during a call, by functions: a test can use
// it to learn when a retry is scheduled. Nil fields are skipped. Functions
// must not block. It is the CallObserver made of closures; see CallObserver
// for one with state of its own.
type Observer struct {
	// Retry is called, on the call's goroutine, when a retry is scheduled:
	// attempt is the failed attempt (1-based), delay the wait before the
	// next one, err the attempt's error.
	Retry func(attempt int, delay time.Duration, err error)
	// Abandoned is called, on the call's goroutine, when the attempt timeout
	// gives control back while the tool is still running.
	Abandoned func(attempt int)
	// AbandonedDone is called, on the abandoned attempt's goroutine, when the
	// tool finally returns.
	AbandonedDone func(attempt int)
	// Fallback is called when the call is routed to the alternative tool
	// name (see Call.SetFallback), on the goroutine that routes it.
	Fallback func(name string)
	// BreakerStateChange is called when a circuit breaker changes state
	// during the call (see Call.RecordBreakerStateChange): breaker names it
	// ("" if it has no name), from and to are failsafe-go's state names
	// ("closed", "open", "half-open").
	BreakerStateChange func(breaker, from, to string)
}

// CallObserver is what Call.Observe takes: a value told what happens during
// a call by its methods, each called when, and on the goroutine where, the
// Observer function of the same name would be. Methods must not block.
//
// Observer implements it with its functions. An observer with state of its
// own (otelhook keeps a span and the call's metric attributes) implements it
// on a pointer to that state instead, and so costs one allocation per call
// however many events it handles, where an Observer costs a closure each.
type CallObserver interface {
	OnRetry(attempt int, delay time.Duration, err error)
	OnAbandoned(attempt int)
	OnAbandonedDone(attempt int)
	OnFallback(name string)
	OnBreakerStateChange(breaker, from, to string)
}

var _ CallObserver = Observer{}

// OnRetry calls o.Retry, if set.
func (o Observer) OnRetry(attempt int, delay time.Duration, err error) {
	if o.Retry != nil {
		o.Retry(attempt, delay, err)
	}
}

// OnAbandoned calls o.Abandoned, if set.
func (o Observer) OnAbandoned(attempt int) {
	if o.Abandoned != nil {
		o.Abandoned(attempt)
	}
}

// OnAbandonedDone calls o.AbandonedDone, if set.
func (o Observer) OnAbandonedDone(attempt int) {
	if o.AbandonedDone != nil {
		o.AbandonedDone(attempt)
	}
}

// OnFallback calls o.Fallback, if set.
func (o Observer) OnFallback(name string) {
	if o.Fallback != nil {
		o.Fallback(name)
	}
}

// OnBreakerStateChange calls o.BreakerStateChange, if set.
func (o Observer) OnBreakerStateChange(breaker, from, to string) {
	if o.BreakerStateChange != nil {
		o.BreakerStateChange(breaker, from, to)
	}
}

// NewCall starts the record of one call to tool. An empty id gets one made
// up: "call_" and 16 hex digits, unique within the process and unlikely to
// repeat across processes. The idempotency key (see Key) is random, 32 hex
// digits from crypto/rand, and the same for every attempt of the call.
func NewCall(tool, id string) *Call {
	known := id != ""
	if !known {
		id = newCallID()
	}
	return &Call{tool: tool, id: id, idKnown: known, start: time.Now()}
}

// callIDs makes call IDs without a system call each: a random seed per
// process, a counter, and splitmix64's finalizer, which is a bijection, so
// IDs never repeat within the process and look random.
var callIDs struct {
	seed uint64
	n    atomic.Uint64
}

func init() {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	callIDs.seed = binary.LittleEndian.Uint64(b[:])
}

func newCallID() string {
	z := callIDs.seed + callIDs.n.Add(1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], z)
	var b [len("call_") + 16]byte
	copy(b[:], "call_")
	hex.Encode(b[len("call_"):], raw[:])
	return string(b[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return hex.EncodeToString(b)
}

// Tool is the name of the tool called.
func (c *Call) Tool() string { return c.tool }

// ID is the call ID: the model's tool-call ID when known
// (gen_ai.tool.call.id), else a random one.
func (c *Call) ID() string { return c.id }

// IDKnown reports whether the ID was given to NewCall (the model's tool-call
// ID) rather than made up.
func (c *Call) IDKnown() bool { return c.idKnown }

// Key is the idempotency key, the same for every attempt of this call. Send it
// as the Idempotency-Key HTTP header so the upstream applies a side effect
// once.
func (c *Call) Key() string {
	c.keyOnce.Do(func() {
		if c.key == "" {
			c.key = randomHex(16)
		}
	})
	return c.key
}

// Start is when the call began.
func (c *Call) Start() time.Time { return c.start }

// BeginAttempt counts a new attempt and returns its number (1-based) and a
// context that carries it (see AttemptNumber).
func (c *Call) BeginAttempt(ctx context.Context) (context.Context, int) {
	c.mu.Lock()
	c.attempts++
	n := c.attempts
	c.mu.Unlock()
	return context.WithValue(ctx, attemptKey{}, n), n
}

// Attempts is the number of attempts begun so far.
func (c *Call) Attempts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// RecordRetry records the wait scheduled after the failed attempt and tells
// the observers.
func (c *Call) RecordRetry(attempt int, delay time.Duration, err error) {
	c.mu.Lock()
	c.delays = append(c.delays, delay)
	obs := c.observers
	c.mu.Unlock()
	for _, o := range obs {
		o.OnRetry(attempt, delay, err)
	}
}

// Delays are the waits recorded so far, a copy.
func (c *Call) Delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.delays) == 0 {
		return nil
	}
	return append([]time.Duration(nil), c.delays...)
}

// SetLogger sets the logger of the call; nil means slog.Default().
func (c *Call) SetLogger(l *slog.Logger) {
	c.mu.Lock()
	c.logger = l
	c.mu.Unlock()
}

// Logger is the call's logger: the one set with SetLogger, else slog.Default().
// A nil *Call answers slog.Default().
func (c *Call) Logger() *slog.Logger {
	if c == nil {
		return slog.Default()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logger == nil {
		return slog.Default()
	}
	return c.logger
}

// Observe adds an observer to the call: an Observer, or any other
// CallObserver. A nil o is ignored.
func (c *Call) Observe(o CallObserver) {
	if o == nil {
		return
	}
	c.mu.Lock()
	if c.observers == nil {
		c.observers = c.obsBuf[:0]
	}
	// Appending never changes the elements a notifier copied out before.
	c.observers = append(c.observers, o)
	c.mu.Unlock()
}

// RecordAbandoned counts an attempt that was still running when its time was
// up: it goes on in the background until the tool returns, and the returned
// function must be called then.
func (c *Call) RecordAbandoned(attempt int) (done func()) {
	c.mu.Lock()
	c.abandoned++
	obs := c.observers
	c.mu.Unlock()
	for _, o := range obs {
		o.OnAbandoned(attempt)
	}
	return func() {
		for _, o := range obs {
			o.OnAbandonedDone(attempt)
		}
	}
}

// Abandoned is the number of attempts abandoned by the attempt timeout.
func (c *Call) Abandoned() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.abandoned
}

// SetFallback records the name of the alternative tool the call was routed
// to, and tells the observers (Observer.Fallback).
func (c *Call) SetFallback(name string) {
	c.mu.Lock()
	c.fallback = name
	obs := c.observers
	c.mu.Unlock()
	for _, o := range obs {
		o.OnFallback(name)
	}
}

// RecordBreakerStateChange tells the observers (Observer.BreakerStateChange)
// that the circuit breaker named breaker went from one state to another
// during this call. A breaker's OnStateChanged listener calls it with
// CallFrom(event.Context()). A nil *Call does nothing.
func (c *Call) RecordBreakerStateChange(breaker, from, to string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	obs := c.observers
	c.mu.Unlock()
	for _, o := range obs {
		o.OnBreakerStateChange(breaker, from, to)
	}
}

// Fallback is the name of the alternative tool that answered, or "".
func (c *Call) Fallback() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fallback
}

// SetFailure records the failure that ended the call.
func (c *Call) SetFailure(f *Failure) {
	c.mu.Lock()
	c.failure = f
	c.mu.Unlock()
}

// Failure is the failure that ended the call, or nil.
func (c *Call) Failure() *Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

type callKey struct{}
type attemptKey struct{}

// WithCall returns a context that carries c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the call record in ctx, or nil when ctx carries none (the
// tool was called without toolsafe).
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// ensureCall returns ctx's call record, or starts one for tool when a layer
// runs without toolsafe's root above it.
func ensureCall(ctx context.Context, tool string) (context.Context, *Call) {
	if c := CallFrom(ctx); c != nil {
		return ctx, c
	}
	c := NewCall(tool, "")
	return WithCall(ctx, c), c
}

// IdempotencyKey returns the idempotency key of the call in ctx: 32 hex
// digits, the same for every attempt of one logical call, different for
// every call. A tool with side effects sends it upstream (the Idempotency-Key
// HTTP header) so a retried request is applied once. It is "" when ctx
// carries no call.
func IdempotencyKey(ctx context.Context) string {
	if c := CallFrom(ctx); c != nil {
		return c.Key()
	}
	return ""
}

// CallID returns the ID of the call in ctx, or "".
func CallID(ctx context.Context) string {
	if c := CallFrom(ctx); c != nil {
		return c.id
	}
	return ""
}

// AttemptNumber returns the number of the attempt running in ctx: 1 for the
// first, 2 for the first retry. It is 0 outside an attempt.
func AttemptNumber(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}
