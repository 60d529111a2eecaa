package policyfile

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
)

// check adds the problems that involve more than one field: limits that
// contradict each other, names that point nowhere, fallback cycles.
func (c *File) check(ps *problems) {
	add := func(w where, format string, args ...any) { ps.add(problemAt(w, format, args...)) }

	checkLimits(add, "defaults", "", &c.defaults, nil)
	for _, name := range c.names {
		t := c.tools[name]
		checkLimits(add, "tools."+name, name, &t.policySpec, &c.defaults)
		if t.dependency.set && t.dependency.v != "" && c.deps[t.dependency.v] == nil {
			w := fieldWhere("tools."+name, name, "dependency", t.dependency.at)
			if len(c.depNames) == 0 {
				add(w, "unknown dependency %q: declare it under dependencies", t.dependency.v)
			} else {
				add(w, "unknown dependency %q: declare it under dependencies, or use one of %s%s",
					t.dependency.v, nameList(c.depNames), ps.suggestName(t.dependency.v, c.depNames))
			}
		}
		gated := t.approval.set && t.approval.v != approvalNone
		if t.approvers.set && !gated {
			add(fieldWhere("tools."+name, name, "approvers", t.approvers.at),
				"approvers name who decides %s's calls, and it asks nobody: set approval: per_call or every_attempt, or drop approvers", name)
		}
		if t.approvals.set && t.approvals.v > 1 && !gated {
			add(fieldWhere("tools."+name, name, "approvals", t.approvals.at),
				"approvals: %d asks %d people, and %s asks nobody: set approval: per_call or every_attempt, or drop approvals", t.approvals.v, t.approvals.v, name)
		}
		if t.fallback.set && t.fallback.v == name {
			add(fieldWhere("tools."+name, name, "fallback.tool", t.fallback.at),
				"%s falls back to itself: name another tool", name)
		}
	}
	c.checkCycles(add)
	var le *toolsafe.ToolListError
	if errors.As(toolsafe.CheckNames(c.names...), &le) {
		for _, n := range le.Collisions {
			first, second := c.tools[n.FirstName], c.tools[n.SecondName]
			ps.add(&Problem{Path: "tools." + n.SecondName, Tool: n.SecondName, Line: second.at.Line, Column: second.at.Col,
				Message: fmt.Sprintf("%s and %s (line %d) name one tool for langchaingo, whose executor looks tools up by their upper-cased name: merge the two entries, or rename one",
					yamlread.QuoteShort(n.SecondName), yamlread.QuoteShort(n.FirstName), first.at.Line)})
		}
	}

	for _, name := range c.depNames {
		d := c.deps[name]
		dw := func(field string, at yamlread.Pos) where {
			return where{path: "dependencies." + name + "." + field, dep: name, field: field, at: at}
		}
		if d.breaker != nil {
			if err := d.breaker.Validate(); err != nil {
				add(dw("breaker.window", d.windowAt), "%v", err)
			}
		}
		if d.isShared() && d.breaker == nil && d.retryBudget.v == 0 {
			add(dw("shared", d.shared.at),
				"shared: %s shares the breaker and the retry budget of the dependency, and it has neither: add a breaker or a retry_budget, or drop shared", d.shared.v)
		}
		if d.maxWait.set && d.maxWait.v > 0 && d.concurrency.v == 0 {
			add(dw("max_wait", d.maxWait.at),
				"max_wait %v does nothing without concurrency: set concurrency (the attempts in flight at once) or drop max_wait", d.maxWait.v)
		}
	}
}

func fieldWhere(path, tool, field string, at yamlread.Pos) where {
	return where{path: path + "." + field, tool: tool, field: field, at: at}
}

// checkLimits checks the timeout against the deadline and the backoff's max
// against its base, for the defaults (def nil) or a tool over the defaults.
// A tool is only blamed when it sets one of the two fields itself;
// otherwise the defaults were.
func checkLimits(add func(where, string, ...any), path, tool string, p, def *policySpec) {
	get := func(o, d opt[time.Duration]) opt[time.Duration] {
		if def == nil {
			return o
		}
		return o.or(d)
	}
	var dt, dd, db, dm opt[time.Duration]
	if def != nil {
		dt, dd, db, dm = def.timeout, def.deadline, def.base, def.max
	}
	timeout, deadline := get(p.timeout, dt), get(p.deadline, dd)
	if err := policy.ValidateTimeouts(timeout.v, deadline.v); err != nil && (p.timeout.set || p.deadline.set) {
		field, at := "timeout", p.timeout.at
		if !p.timeout.set {
			field, at = "deadline", p.deadline.at
		}
		add(fieldWhere(path, tool, field, at), "%v", err)
	}
	base, maxWait := get(p.base, db), get(p.max, dm)
	if base.v > 0 && maxWait.v > 0 && maxWait.v < base.v && (p.base.set || p.max.set) {
		field, at := "backoff.max", p.max.at
		if !p.max.set {
			field, at = "backoff.base", p.base.at
		}
		add(fieldWhere(path, tool, field, at),
			"backoff max %v is shorter than its base %v: every wait would be %v; raise max or lower base",
			maxWait.v, base.v, maxWait.v)
	}
}

// checkCycles reports each fallback cycle once, at the fallback of the
// cycle's tool that comes first in the file, as "a → b → a". Each tool has
// at most one fallback, so the cycles are disjoint and every tool is
// visited once: the time is linear in the number of tools.
func (c *File) checkCycles(add func(where, string, ...any)) {
	order := make(map[string]int, len(c.names)) // a tool's place in the file
	for i, n := range c.names {
		order[n] = i
	}
	const (
		unseen = iota
		onPath // on the walk being followed
		done
	)
	state := make(map[string]int, len(c.names))
	for _, start := range c.names {
		var path []string
		cur := start
		for state[cur] == unseen {
			state[cur] = onPath
			path = append(path, cur)
			t := c.tools[cur]
			if t == nil || !t.fallback.set || t.fallback.v == cur {
				break // no fallback, or one to itself (reported on its own)
			}
			cur = t.fallback.v
		}
		if state[cur] == onPath && len(path) > 0 && path[len(path)-1] != cur {
			// cur is on this walk: the walk from cur on is a cycle.
			i := indexOf(path, cur)
			cycle := path[i:]
			first := 0
			for j, n := range cycle {
				if order[n] < order[cycle[first]] {
					first = j
				}
			}
			names := append(append(append([]string{}, cycle[first:]...), cycle[:first]...), cycle[first])
			head := c.tools[cycle[first]]
			add(fieldWhere("tools."+cycle[first], cycle[first], "fallback.tool", head.fallback.at),
				"fallback cycle %s: when all of them fail, each would call the next forever; end the chain at a tool without a fallback",
				strings.Join(names, " → "))
		}
		for _, n := range path {
			state[n] = done
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
