package middleware

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/tools"
)

// CallLimits caps the calls a model may make in one agent run (see
// WithRun), so that it cannot redo by hand what toolsafe already retried.
// Zero fields mean no limit of their own; even then, an identical call
// after one whose failure told the model not to call it again (retries ran
// out, a circuit open, a denial, a panic, a refusal by this guard) is
// refused, unless AllowRepeats.
type CallLimits struct {
	// Identical is the most calls of the tool with the same input (the same
	// JSON, see Canonical) in one run.
	Identical int
	// PerTool is the most calls of the tool in one run, whatever the input.
	PerTool int
	// Total is the most calls of all tools in one run: a call of this tool
	// is refused once the run made that many calls.
	Total int
	// AllowRepeats turns off the refusal of an identical call after a
	// failure that said not to repeat it.
	AllowRepeats bool
}

// Validate reports negative limits.
func (l CallLimits) Validate() error {
	var bad []string
	for _, f := range []struct {
		name string
		n    int
	}{{"identical", l.Identical}, {"per tool", l.PerTool}, {"total", l.Total}} {
		if f.n < 0 {
			bad = append(bad, fmt.Sprintf("%s %d", f.name, f.n))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("call limits: %s: a limit must be positive, or 0 for none", strings.Join(bad, ", "))
	}
	return nil
}

// limitError is a call the loop guard refused.
type limitError struct {
	limit    string // "repeat", "identical", "per tool", "total"
	previous int    // calls counted against the limit
	failed   bool   // every previous identical call failed
}

func (e *limitError) Error() string {
	return fmt.Sprintf("toolsafe: the loop guard refused the call (%s, %d before)", e.limit, e.previous)
}

// LoopGuard is the loop guard, inside the run ledger (a call answered from
// the ledger is no new call and is not counted twice) and outside the
// fallback: in a run scoped with WithRun, it refuses a call, before any
// attempt, with call-limit when the run's ledger shows that l's limits are
// reached, or that the same call failed already with a failure that told
// the model not to repeat it. The model is told what was already tried and
// what to do instead. A call after a tool-error (the model fixing its
// arguments) has another input, so it is never a repeat. The counts are the
// run's entries in its ledger, so replicas that share the ledger share
// them, and the calls still running on this run's context, so calls made at
// once (toolcall.Dispatch) cannot all pass a limit only one of them may; a
// call that paused for approval counts when it is made. Outside a scoped
// run it does nothing.
func LoopGuard(l CallLimits) Middleware {
	return func(next tools.Tool) tools.Tool {
		return wrap(next, func(ctx context.Context, input string) (string, error) {
			call := CallFrom(ctx)
			r := call.runOf(ctx)
			if r == nil {
				return next.Call(ctx, input)
			}
			return l.guard(ctx, r, call, next, input)
		})
	}
}

// guard runs the call of next with input in run r, unless l refuses it
// (see LoopGuard).
func (l CallLimits) guard(ctx context.Context, r *run, call *Call, next tools.Tool, input string) (string, error) {
	canon, err := call.canonical(input)
	if err != nil {
		return "", err
	}
	entries, ok := call.runEntries()
	if !ok {
		if entries, err = r.ledger.Entries(ctx, r.id); err != nil {
			debugLog(ctx, call, "toolsafe: the loop guard could not read the run ledger", "run", r.id, "error", errorText(err))
			return next.Call(ctx, input)
		}
	}
	tool := next.Name()
	flight, err := r.admit(l, entries, Entry{Tool: tool, Input: canon, Key: call.Key()})
	if err != nil {
		return "", err
	}
	out, err := next.Call(ctx, input)
	if err != nil && unfinished(FailureOf(ctx, err)) {
		r.land(flight) // a pause: the call is made when it resumes
	}
	return out, err
}

// admit checks the call e against l, counting the run's calls in entries
// and the calls this scope let through that entries does not show yet
// (still running, or not yet read back from the ledger), so that calls made
// at once cannot all pass a limit that only one of them may. When l allows
// it, e counts from now on; admit returns it, for land.
func (r *run) admit(l CallLimits, entries []Entry, e Entry) (*Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	inLedger := make(map[string]bool, len(entries))
	for _, le := range entries {
		inLedger[le.Key] = true
	}
	// Flights before entries: a call's entry says how it ended. The call's
	// own earlier entries (a resumed run making it again, under its key)
	// are not another call.
	r.flights = slices.DeleteFunc(r.flights, func(f *Entry) bool { return inLedger[f.Key] })
	all := make([]Entry, 0, len(r.flights)+len(entries))
	for _, f := range r.flights {
		if f.Key != e.Key {
			all = append(all, *f)
		}
	}
	for _, le := range entries {
		if le.Key != e.Key {
			all = append(all, le)
		}
	}
	if err := l.check(all, e.Tool, e.Input); err != nil {
		return nil, err
	}
	f := &e
	r.flights = append(r.flights, f)
	return f, nil
}

// land forgets the flight f of a call that was not made.
func (r *run) land(f *Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flights = slices.DeleteFunc(r.flights, func(g *Entry) bool { return g == f })
}

// check counts the run's calls (one per idempotency key; the guard's own
// refusals made no call and are not counted) and refuses the call of tool
// with input when a limit is reached.
func (l CallLimits) check(entries []Entry, tool, input string) error {
	latest := map[string]Entry{} // key → how the call ended
	var order []string
	for _, e := range entries {
		if _, seen := latest[e.Key]; !seen {
			order = append(order, e.Key)
		}
		latest[e.Key] = e
	}
	var total, perTool, identical, identicalFailed int
	var last *Entry
	for _, k := range order {
		e := latest[k]
		if e.Tool == tool && e.Input == input {
			last = &e
		}
		if e.Kind == KindCallLimit {
			continue // refused: no call was made, so it counts against no limit
		}
		total++
		if e.Tool != tool {
			continue
		}
		perTool++
		if e.Input == input {
			identical++
			if e.Kind != "" {
				identicalFailed++
			}
		}
	}
	switch {
	case !l.AllowRepeats && last != nil && saidDoNotRepeat(*last):
		return &limitError{limit: "repeat", previous: identical, failed: identicalFailed == identical}
	case l.Identical > 0 && identical >= l.Identical:
		return &limitError{limit: "identical", previous: identical, failed: identicalFailed == identical}
	case l.PerTool > 0 && perTool >= l.PerTool:
		return &limitError{limit: "per tool", previous: perTool}
	case l.Total > 0 && total >= l.Total:
		return &limitError{limit: "total", previous: total}
	}
	return nil
}

// saidDoNotRepeat reports whether the call e ended with a message telling
// the model not to make the same call again.
func saidDoNotRepeat(e Entry) bool {
	switch e.Kind {
	case KindFailed, KindTimeout:
		return !e.Retryable
	case KindCircuitOpen, KindApprovalDenied, KindPanic, KindCallLimit:
		return true
	}
	return false
}

// limitMessage is the model's message for a call the loop guard refused.
func limitMessage(b *strings.Builder, tool string, e *limitError) {
	times := func(n int) string {
		if n == 1 {
			return "once"
		}
		return fmt.Sprintf("%d times", n)
	}
	switch e.limit {
	case "repeat", "identical":
		fmt.Fprintf(b, "%s was not called: it was already called %s with this input in this request", tool, times(e.previous))
		switch {
		case e.limit == "repeat" && e.failed && e.previous > 1:
			b.WriteString(" and failed each time")
		case e.limit == "repeat":
			b.WriteString(", and its last answer said not to call it again")
		default:
			b.WriteString(", the most allowed")
		}
		fmt.Fprintf(b, ". Do not call %s again with this input; use what it answered, tell the user it is unavailable, or use another tool.", tool)
	case "per tool":
		fmt.Fprintf(b, "%s was not called: it was already called %s in this request, the most allowed for it. Do not call it again in this request; go on without it.", tool, times(e.previous))
	default:
		fmt.Fprintf(b, "%s was not called: this request already made %d tool calls, the most allowed. Do not call more tools; answer the user with what you have.", tool, e.previous)
	}
}
