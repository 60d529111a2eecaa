package policyfile

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// check adds the problems that involve more than one field: limits that
// contradict each other, names that point nowhere, fallback cycles.
func (c *File) check(ps *problems) {
	add := func(w where, format string, args ...any) {
		ps.add(&Problem{Path: w.path, Tool: w.tool, Dependency: w.dep, Field: w.field,
			Line: w.at.line, Column: w.at.col, Message: fmt.Sprintf(format, args...)})
	}

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
					t.dependency.v, strings.Join(c.depNames, ", "), suggest(t.dependency.v, c.depNames))
			}
		}
		if t.fallback.set && t.fallback.v == name {
			add(fieldWhere("tools."+name, name, "fallback.tool", t.fallback.at),
				"%s falls back to itself: name another tool", name)
		}
	}
	c.checkCycles(add)

	for _, name := range c.depNames {
		d := c.deps[name]
		path := "dependencies." + name
		dw := func(field string, at pos) where {
			return where{path: path + "." + field, dep: name, field: field, at: at}
		}
		if d.window.set && d.window.v != 0 && d.window.v < breakerFailures(d) {
			add(dw("breaker.window", d.window.at),
				"window %d is smaller than failures %d: the breaker could never open; make the window at least %d, or 0 for failures in a row",
				d.window.v, breakerFailures(d), breakerFailures(d))
		}
		if d.maxWait.set && d.maxWait.v > 0 && d.concurrency.v == 0 {
			add(dw("max_wait", d.maxWait.at),
				"max_wait %v does nothing without concurrency: set concurrency (the attempts in flight at once) or drop max_wait", d.maxWait.v)
		}
	}
}

func fieldWhere(path, tool, field string, at pos) where {
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
	if timeout.v > 0 && deadline.v > 0 && timeout.v > deadline.v && (p.timeout.set || p.deadline.set) {
		field, at := "timeout", p.timeout.at
		if !p.timeout.set {
			field, at = "deadline", p.deadline.at
		}
		add(fieldWhere(path, tool, field, at),
			"attempt timeout %v is longer than the deadline %v: the deadline would always cut the attempt short; make the timeout shorter or the deadline longer",
			timeout.v, deadline.v)
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
// cycle's tool that comes first in the file.
func (c *File) checkCycles(add func(where, string, ...any)) {
	reported := map[string]bool{}
	for _, start := range c.names {
		if reported[start] {
			continue
		}
		// Follow the fallbacks from start; a revisit of start is a cycle.
		path := []string{start}
		for cur := start; ; {
			t := c.tools[cur]
			if t == nil || !t.fallback.set || t.fallback.v == cur {
				break // self-fallbacks are reported on their own
			}
			next := t.fallback.v
			if next == start {
				path = append(path, start)
				for _, n := range path {
					reported[n] = true
				}
				st := c.tools[start]
				add(fieldWhere("tools."+start, start, "fallback.tool", st.fallback.at),
					"fallback cycle %s: when all of them fail, each would call the next forever; end the chain at a tool without a fallback",
					strings.Join(path, " → "))
				break
			}
			if slices.Contains(path, next) {
				break // a cycle that does not pass through start: reported from its own tools
			}
			path = append(path, next)
			cur = next
		}
	}
}

func breakerFailures(d *depSpec) int {
	if d.failures.v == 0 {
		return 5
	}
	return d.failures.v
}
