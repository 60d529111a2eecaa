package middleware

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/tmc/langchaingo/tools"
)

// Ledger keeps the calls of agent runs, so that a run resumed after a pause
// (or on another replica) does not repeat a call that already completed:
// the run ledger. Each finished call of a run scoped with WithRun is
// appended as an Entry; RunLedger reads a run's entries to answer a resumed
// run's calls. A Ledger must be safe for concurrent use. MemoryLedger is
// the in-process one; a fleet of replicas shares one in a store such as
// Redis.
//
// A Ledger that cannot answer returns an error: toolsafe then fails closed
// for tools with side effects (it neither repeats nor replays the call, and
// says so), and goes on without replay for tools that only read.
//
// Its methods run on the caller's goroutine, outside the tool's deadline
// and attempt timeout, so they must return promptly: bound every operation
// (redisstore's Ledger waits at most its Store's timeout, 50 ms by
// default). Append is given a context that the end of the call does not
// cancel, so that a call that finished is recorded all the same.
type Ledger interface {
	// Append adds e to the entries of run, after those already there.
	Append(ctx context.Context, run string, e Entry) error
	// Entries returns the entries of run, oldest first; none for a run it
	// does not know (or no longer keeps).
	Entries(ctx context.Context, run string) ([]Entry, error)
}

// Entry is one finished call of a run.
type Entry struct {
	// Tool is the tool called; Input its input in canonical form (see
	// Canonical), so that calls with the same JSON match.
	Tool, Input string
	// Key is the call's idempotency key: the same for every attempt of the
	// call, and for the call that continues it in a resumed run. Entries
	// with the same key are one call; the latest says how it ended.
	Key string
	// CallID is the call's ID.
	CallID string
	// Kind is the kind of the call's failure, "" when it answered.
	Kind Kind
	// Retryable is the failure's Retryable: false when its message told the
	// model not to repeat the call (see LoopGuard).
	Retryable bool
	// SideEffectUnknown reports that the call's action may have been
	// applied without an answer: a resumed run sends it again with Key.
	SideEffectUnknown bool
	// Output is the call's answer when Kind is "" (none for a ReadOnly
	// entry, which is never replayed).
	Output string
	// Fallback is the alternative tool that answered, if one did.
	Fallback string
	// At is when the call finished.
	At time.Time
	// ReadOnly reports that the tool only reads (no side effects, no
	// gate): a resumed run calls it again, so the entry only counts the
	// call (see LoopGuard). A bounded ledger drops such entries before
	// any other, so reads cannot push a completed side effect out.
	ReadOnly bool
}

// TrimEntries returns entries without n of them, for a ledger that keeps
// a bounded number per run: the oldest ReadOnly entries first, then, only
// when n is more than those, the oldest of the rest. The order of those
// kept is unchanged; entries is reused.
func TrimEntries(entries []Entry, n int) []Entry {
	if n <= 0 {
		return entries
	}
	readOnly := 0
	for _, e := range entries {
		if e.ReadOnly {
			readOnly++
		}
	}
	dropReads, dropOthers := min(n, readOnly), max(0, n-readOnly)
	kept := entries[:0]
	for _, e := range entries {
		switch {
		case e.ReadOnly && dropReads > 0:
			dropReads--
		case !e.ReadOnly && dropOthers > 0:
			dropOthers--
		default:
			kept = append(kept, e)
		}
	}
	clear(entries[len(kept):])
	return kept
}

// replayable reports whether a resumed run answers or continues e instead
// of making a new call: e answered, or its action may have landed.
func (e Entry) replayable() bool { return e.Kind == "" || e.SideEffectUnknown }

// run is one scope of an agent run: what its calls have claimed among the
// run's entries. A new scope (WithRun, or Resume) starts with nothing
// claimed, so its calls replay the run's entries in order.
type run struct {
	id     string
	ledger Ledger

	mu      sync.Mutex
	claimed map[string]bool // idempotency keys this scope has made or replayed
	// flights are the calls the loop guard let through that the ledger did
	// not show when last read: running, or finished since.
	flights []*Entry
}

// scope is what a context tells every call made on it: the run it is part
// of, and the paused calls it resumes. One value, so that starting a call
// looks the context up once.
type scope struct {
	run         *run
	resumptions []*resumption
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

// withScope returns ctx carrying a scope like ctx's, changed by f.
func withScope(ctx context.Context, f func(*scope)) context.Context {
	var s scope
	if parent := scopeFrom(ctx); parent != nil {
		s = *parent
	}
	f(&s)
	return context.WithValue(ctx, scopeKey{}, &s)
}

// WithRun returns a context that scopes an agent run: pass it to the
// executor's run (or to Tool.Run). Every call made on it is appended to l
// under runID. A run scoped again with the same ID and ledger, or
// continued with Resume, is a resumed run: the n-th call of a tool with the
// same input (the same JSON, whatever its key order or spacing) that
// already answered in the run is answered from its entry, without calling
// the tool (Result.Replayed); one whose outcome was unknown is sent again
// with its old idempotency key; calls beyond those are new. Tools that
// only read are always called again (see RunLedger).
//
// A nil l means the process's default ledger (DefaultLedger). An empty
// runID makes up a random one (ApprovalRequired.RunID carries it). Without
// WithRun, calls are not recorded and nothing is replayed.
func WithRun(ctx context.Context, runID string, l Ledger) context.Context {
	if l == nil {
		l = DefaultLedger()
	}
	if runID == "" {
		runID = "run_" + randomHex(8)
	}
	r := &run{id: runID, ledger: l, claimed: map[string]bool{}}
	return withScope(ctx, func(s *scope) { s.run = r })
}

// RunID returns the ID of the run ctx is scoped to (see WithRun), or "".
func RunID(ctx context.Context) string {
	if r := runFrom(ctx); r != nil {
		return r.id
	}
	return ""
}

func runFrom(ctx context.Context) *run {
	if s := scopeFrom(ctx); s != nil {
		return s.run
	}
	return nil
}

// claim returns the first entry of tool with input among entries that a
// resumed run answers or continues and that this scope has not claimed
// yet, and claims it. Entries of one key are one call: the latest says how
// it ended, the first where it stands.
func (r *run) claim(entries []Entry, tool, input string, anyOutcome bool) (Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latest := map[string]int{}
	for i, e := range entries {
		if e.Tool == tool && e.Input == input {
			latest[e.Key] = i
		}
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Tool != tool || e.Input != input || seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		last := entries[latest[e.Key]]
		if !r.claimed[e.Key] && (anyOutcome || last.replayable()) {
			r.claimed[e.Key] = true
			return last, true
		}
	}
	return Entry{}, false
}

func (r *run) claimKey(key string) {
	r.mu.Lock()
	r.claimed[key] = true
	r.mu.Unlock()
}

// errLedger fails closed a call whose run ledger could not be read.
var errLedger = errors.New("toolsafe: the run's ledger could not be read, so it is unknown whether this call already ran")

// RunLedger is the run-ledger layer, inside argument validation and outside
// the fallback: in a run scoped with WithRun, it appends every finished
// call to the run's ledger (its answer, or the kind of its failure and
// whether its action may have been applied; a pause is not finished) and,
// when replay is true, answers a resumed run's calls from it: the n-th call
// of the tool with the same canonical input that answered is answered
// again from its entry without calling the tool, recording Replayed (the
// approval gate is not asked again); one whose outcome was unknown is sent
// again with its old idempotency key, through every layer, gate included.
// toolsafe gives replay to tools that have side effects or an approval
// gate; a tool that only reads is always called again.
//
// When the ledger cannot be read, a tool with replay fails closed with
// tool-failed (not retried; the model is told not to call it again) rather
// than risk a second side effect; one without replay runs. Outside a
// scoped run it does nothing.
func RunLedger(replay bool) Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			call := CallFrom(ctx)
			r := call.runOf(ctx)
			if r == nil {
				return next.Call(ctx, input)
			}
			// Out of line, so that a call outside a run keeps a small frame.
			return r.call(ctx, call, next, input, replay)
		})
	}
}

// call runs the call of next with input in run r (see RunLedger).
func (r *run) call(ctx context.Context, call *Call, next tools.Tool, input string, replay bool) (string, error) {
	canon, err := call.canonical(input)
	if err != nil {
		return "", err
	}
	tool := next.Name()
	if replay {
		entries, err := r.ledger.Entries(ctx, r.id)
		call.keepRunEntries(entries, err == nil)
		if err != nil {
			logAt(ctx, call, slog.LevelWarn, "toolsafe: the run ledger could not be read; the call is refused", "run", r.id)
			debugLog(ctx, call, "toolsafe: the run ledger could not be read", "run", r.id, "error", errorText(err))
			return "", Permanent(errLedger)
		}
		if e, ok := r.claim(entries, tool, canon, false); ok {
			if !e.SideEffectUnknown {
				call.adoptID(e.CallID)
				call.record(Replayed{Entry: e})
				return e.Output, nil
			}
			call.continueCall(e.Key)
		}
	} else if entries, err := r.ledger.Entries(ctx, r.id); err == nil {
		// A read is made again, but as the call it repeats: under its key,
		// so that the loop guard does not count it twice.
		call.keepRunEntries(entries, true)
		if e, ok := r.claim(entries, tool, canon, true); ok {
			call.adoptKey(e.Key)
		}
	}
	out, err := next.Call(ctx, input)
	e := Entry{Tool: tool, Input: canon, CallID: call.ID(), At: time.Now(), ReadOnly: !replay}
	if replay {
		e.Output = out // a read is never replayed: its answer is not kept
	}
	if err != nil {
		f := FailureOf(ctx, err)
		if unfinished(f) {
			return out, err // not finished: nothing to record
		}
		e.Kind, e.Retryable, e.SideEffectUnknown, e.Output = f.Kind, f.Retryable, f.SideEffect == SideEffectUnknown, ""
	}
	e.Key, e.Fallback = call.Key(), call.fallbackName()
	r.claimKey(e.Key)
	if aerr := r.ledger.Append(context.WithoutCancel(ctx), r.id, e); aerr != nil {
		logAt(ctx, call, slog.LevelWarn, "toolsafe: the call could not be added to the run ledger; a resumed run may repeat it", "run", r.id)
		debugLog(ctx, call, "toolsafe: the call could not be added to the run ledger", "run", r.id, "error", errorText(aerr))
	}
	return out, err
}

// unfinished reports whether a call that ended with f is yet to be made: it
// paused for approval, or the caller canceled it before anything could
// have been applied.
func unfinished(f *Failure) bool {
	return f.Kind == KindApprovalRequired || (f.Kind == KindCanceled && f.SideEffect != SideEffectUnknown)
}

// Replayed: the call was answered from the run ledger's entry, without
// calling the tool (see RunLedger).
type Replayed struct {
	Entry Entry
}

func (Replayed) isEvent() {}
