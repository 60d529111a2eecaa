package run

import (
	"fmt"
	"strings"
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

// check refuses a new call whose run already made counts (see Counts)
// when a limit is reached, or when the identical call that ended last
// said not to repeat it. The guard's own refusals made no call and count
// against no limit.
func (l Limits) check(c Counts) error {
	switch {
	case !l.AllowRepeats && c.Final:
		return &refusal{which: "repeat", previous: c.Identical, failed: c.IdenticalFailed == c.Identical}
	case l.Identical > 0 && c.Identical >= l.Identical:
		return &refusal{which: "identical", previous: c.Identical, failed: c.IdenticalFailed == c.Identical}
	case l.PerTool > 0 && c.Tool >= l.PerTool:
		return &refusal{which: "per tool", previous: c.Tool}
	case l.Total > 0 && c.Total >= l.Total:
		return &refusal{which: "total", previous: c.Total}
	}
	return nil
}
