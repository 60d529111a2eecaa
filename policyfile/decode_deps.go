package policyfile

import (
	"slices"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/policy"
)

// The dependencies section: upstream services, each with the circuit
// breaker, bulkhead and retry budget its tools share.

var (
	depFields     = []string{"breaker", "concurrency", "max_wait", "retry_budget", "shared"}
	breakerFields = []string{"failures", "window", "delay", "probes"}
)

// depSpec is one entry under dependencies.
type depSpec struct {
	name string
	at   pos
	// breaker is the breaker as the file gives it, zeros meaning what they
	// mean to policy.NewCircuitBreaker; nil when the file gives none.
	breaker     *policy.Breaker
	windowAt    pos // where breaker.window was set, for the problem of a window too small
	concurrency opt[int]
	maxWait     opt[time.Duration]
	retryBudget opt[float64]
	// shared is the store the breaker and the retry budget are shared
	// through by the replicas of a fleet ("redis"); unset or "none" for
	// this process only.
	shared opt[string]
}

func (d *decoder) dependencies(e entry, c *File) {
	for _, de := range d.mapping(e.val, e.w) {
		if de.key == "" {
			d.errf(de.w, "a dependency needs a name")
			continue
		}
		dep := &depSpec{name: de.key, at: de.w.at}
		d.dependency(de, dep)
		c.deps[de.key] = dep
		c.depNames = append(c.depNames, de.key)
	}
}

func (d *decoder) dependency(e entry, dep *depSpec) {
	for _, f := range d.mapping(e.val, e.w) {
		switch f.key {
		case "breaker":
			d.breaker(f, dep)
		case "concurrency":
			dep.concurrency = d.count(f.val, f.w, "use 0 for no bulkhead")
		case "max_wait":
			dep.maxWait = d.duration(f.val, f.w, "use 0 to refuse at once when the bulkhead is full")
		case "shared":
			dep.shared = d.enum(f.val, f.w, append([]string{sharedNone}, sharedKinds...)...)
		case "retry_budget":
			dep.retryBudget = d.number(f.val, f.w)
			if dep.retryBudget.set && (dep.retryBudget.v < 0 || dep.retryBudget.v > 1) {
				d.errf(f.w, "retry_budget %v is outside [0, 1]: it is the largest share of in-flight attempts that may be retries, such as 0.2; 0 means no budget", dep.retryBudget.v)
			}
		default:
			switch {
			case slices.Contains(toolFields, f.key):
				d.errf(f.w, "%s is set per tool, not per dependency: put it under the tools (or defaults)", f.key)
			default:
				d.unknown(f, depFields)
			}
		}
	}
}

// breaker decodes a breaker straight into the policy.Breaker that WrapAll
// gives policy.NewCircuitBreaker. A null breaker is no breaker; {} is one
// with every default.
func (d *decoder) breaker(f entry, dep *depSpec) {
	n := d.deref(f.val, f.w)
	if _, ok := n.(*ast.NullNode); ok || n == nil {
		return
	}
	b := &policy.Breaker{}
	dep.breaker = b
	for _, e := range d.mapping(n, f.w) {
		switch e.key {
		case "failures":
			d.uintTo(&b.FailureThreshold, e, "")
		case "window":
			if d.uintTo(&b.Window, e, "use 0 for failures in a row") {
				dep.windowAt = e.w.at
			}
		case "delay":
			if v := d.duration(e.val, e.w, ""); v.set {
				b.Delay = v.v
			}
		case "probes":
			d.uintTo(&b.Probes, e, "use 0 or 1 for a single probe")
		default:
			d.unknown(e, breakerFields)
		}
	}
}
