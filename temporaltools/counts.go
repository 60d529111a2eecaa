package temporaltools

import "github.com/toolsafe/toolsafe/run"

// counter is the loop guard's counts of a Run, in the workflow's state: the
// run's calls as run.Counts counts them (every call but those not made,
// paused or refused), kept as run.MemoryLedger keeps them, so that the
// loop guard decides in an activity as it would in one process. A call in
// flight counts from its start, so calls made at once cannot all pass a
// limit only one of them may.
type counter struct {
	total   int
	perTool map[string]int
	groups  map[groupKey]*tally
}

type groupKey struct{ tool, input string }

// tally counts the run's calls of one tool with one input.
type tally struct {
	calls, failed int
	final         bool // the identical call to end last was Final
}

func newCounter() counter {
	return counter{perTool: map[string]int{}, groups: map[groupKey]*tally{}}
}

// group is the tally of tool with the canonical input canon.
func (c *counter) group(tool, canon string) *tally {
	k := groupKey{tool, canon}
	g := c.groups[k]
	if g == nil {
		g = &tally{}
		c.groups[k] = g
	}
	return g
}

// before is the counts a new call of tool in g is checked against.
func (c *counter) before(tool string, g *tally) run.Counts {
	return run.Counts{Total: c.total, Tool: c.perTool[tool], Identical: g.calls, IdenticalFailed: g.failed, Final: g.final}
}

// start counts a call of tool in g that is being made.
func (c *counter) start(tool string, g *tally) {
	c.move(tool, g, run.StatusOpen, run.StatusPending)
}

// end counts how the call of tool in g, started, ended: as e says.
func (c *counter) end(tool string, g *tally, e run.Entry) {
	c.move(tool, g, run.StatusPending, e.Status())
	g.final = e.Final()
}

func (c *counter) move(tool string, g *tally, from, to run.Status) {
	d := b2i(counted(to)) - b2i(counted(from))
	c.total += d
	c.perTool[tool] += d
	g.calls += d
	g.failed += b2i(failed(to)) - b2i(failed(from))
}

// counted and failed are run.Counts' rules: a call counts unless it was
// not made (paused, canceled) or refused; it failed when it failed or its
// outcome is unknown.
func counted(s run.Status) bool { return s != run.StatusOpen && s != run.StatusRefused }
func failed(s run.Status) bool  { return s == run.StatusUnknown || s == run.StatusFailed }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
