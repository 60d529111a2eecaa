package policyfile

import (
	"slices"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/policyfile/internal/yamlread"
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
	at   yamlread.Pos
	// breaker is the breaker as the file gives it, zeros meaning what they
	// mean to policy.NewCircuitBreaker; nil when the file gives none.
	breaker     *policy.Breaker
	windowAt    yamlread.Pos // where breaker.window was set, for the problem of a window too small
	concurrency opt[int]
	maxWait     opt[time.Duration]
	retryBudget opt[float64]
	// shared is the store the breaker and the retry budget are shared
	// through by the replicas of a fleet ("redis"); unset or "none" for
	// this process only.
	shared opt[string]
}

func (d *decoder) dependencies(e entry, c *File) {
	for _, de := range d.Mapping(e.Value, e.Where) {
		if de.Key == "" {
			d.errf(de.Where, "a dependency needs a name")
			continue
		}
		dep := &depSpec{name: de.Key, at: de.Where.at}
		d.dependency(de, dep)
		c.deps[de.Key] = dep
		c.depNames = append(c.depNames, de.Key)
	}
}

func (d *decoder) dependency(e entry, dep *depSpec) {
	for _, f := range d.Mapping(e.Value, e.Where) {
		switch f.Key {
		case "breaker":
			d.breaker(f, dep)
		case "concurrency":
			dep.concurrency = d.count(f.Value, f.Where, "use 0 for no bulkhead")
		case "max_wait":
			dep.maxWait = d.duration(f.Value, f.Where, "use 0 to refuse at once when the bulkhead is full")
		case "shared":
			dep.shared = d.enum(f.Value, f.Where, append([]string{sharedNone}, sharedKinds...)...)
		case "retry_budget":
			dep.retryBudget = d.number(f.Value, f.Where)
			if dep.retryBudget.set && (dep.retryBudget.v < 0 || dep.retryBudget.v > 1) {
				d.errf(f.Where, "retry_budget %v is outside [0, 1]: it is the largest share of in-flight attempts that may be retries, such as 0.2; 0 means no budget", dep.retryBudget.v)
			}
		default:
			switch {
			case slices.Contains(toolFields, f.Key):
				d.errf(f.Where, "%s is set per tool, not per dependency: put it under the tools (or defaults)", f.Key)
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
	n := d.Deref(f.Value, f.Where)
	if _, ok := n.(*ast.NullNode); ok || n == nil {
		return
	}
	b := &policy.Breaker{}
	dep.breaker = b
	for _, e := range d.Mapping(n, f.Where) {
		switch e.Key {
		case "failures":
			d.uintTo(&b.FailureThreshold, e, "")
		case "window":
			if d.uintTo(&b.Window, e, "use 0 for failures in a row") {
				dep.windowAt = e.Where.at
			}
		case "delay":
			if v := d.duration(e.Value, e.Where, ""); v.set {
				b.Delay = v.v
			}
		case "probes":
			d.uintTo(&b.Probes, e, "use 0 or 1 for a single probe")
		default:
			d.unknown(e, breakerFields)
		}
	}
}
