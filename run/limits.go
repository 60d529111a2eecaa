package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolsafe/toolsafe/internal/fault"
	"github.com/toolsafe/toolsafe/middleware"
)

// Limits caps the calls a model may make in one agent run (see With), so
// that it cannot redo by hand what toolsafe already retried: the loop
// guard (toolsafe.WithCallLimits).
// Zero fields mean no limit of their own; even then, an identical call
// after one whose failure told the model not to call it again (retries ran
// out, a circuit open, a denial, a panic, a refusal by this guard) is
// refused, unless AllowRepeats.
type Limits struct {
	// Identical is the most calls of the tool with the same input (the same
	// JSON, see canonical.JSON) in one run.
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
func (l Limits) Validate() error {
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

// Admit checks the call e against l, counting the run's calls in entries
// and the calls this scope let through that entries does not show yet
// (still running, or not yet read back from the ledger), so that calls made
// at once cannot all pass a limit that only one of them may. When l allows
// it, e counts from now on; Admit returns it, for Land.
func (s *scope) Admit(l Limits, entries []Entry, e Entry) (*Entry, error) {
	r := s.run
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

// Land forgets the flight f of a call that was not made.
func (s *scope) Land(f *Entry) {
	r := s.run
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flights = slices.DeleteFunc(r.flights, func(g *Entry) bool { return g == f })
}

// check counts the run's calls (one per idempotency key; the guard's own
// refusals made no call and are not counted) and refuses the call of tool
// with input when a limit is reached.
func (l Limits) check(entries []Entry, tool, input string) error {
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
		if e.Kind == middleware.KindCallLimit {
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
		return &fault.Limit{Which: "repeat", Previous: identical, Failed: identicalFailed == identical}
	case l.Identical > 0 && identical >= l.Identical:
		return &fault.Limit{Which: "identical", Previous: identical, Failed: identicalFailed == identical}
	case l.PerTool > 0 && perTool >= l.PerTool:
		return &fault.Limit{Which: "per tool", Previous: perTool}
	case l.Total > 0 && total >= l.Total:
		return &fault.Limit{Which: "total", Previous: total}
	}
	return nil
}

// saidDoNotRepeat reports whether the call e ended with a message telling
// the model not to make the same call again.
func saidDoNotRepeat(e Entry) bool {
	switch e.Kind {
	case middleware.KindFailed, middleware.KindTimeout:
		return !e.Retryable
	case middleware.KindCircuitOpen, middleware.KindApprovalDenied, middleware.KindPanic, middleware.KindCallLimit:
		return true
	}
	return false
}
