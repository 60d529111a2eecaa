package policyfile

import (
	"slices"
	"time"
)

// The fields both defaults and a tool may set, and the defaults section.

var (
	policyFields  = []string{"retries", "timeout", "deadline", "backoff", "tracing", "calls"}
	backoffFields = []string{"base", "max", "multiplier", "jitter"}
	callsFields   = []string{"identical", "per_tool", "total", "repeats"}
)

// MaxCallLimit is the largest limit of calls per run the file accepts: a
// run of an agent makes tens of calls, not tens of thousands.
const MaxCallLimit = 10_000

// policySpec is what both defaults and a tool may set. Each field keeps
// whether it was set, so that a tool's own value wins over the default.
type policySpec struct {
	retries    opt[int]
	timeout    opt[time.Duration]
	deadline   opt[time.Duration]
	base, max  opt[time.Duration]
	multiplier opt[float64]
	jitter     opt[float64]
	tracing    opt[bool]
	// The loop guard's limits per agent run (calls:).
	identical, perTool, total opt[int]
	repeats                   opt[string]
}

func (d *decoder) defaults(e entry, p *policySpec) {
	for _, f := range d.Mapping(e.Value, e.Where) {
		if d.policyField(f, p) {
			continue
		}
		switch {
		case slices.Contains(toolOnly, f.Key):
			d.errf(f.Where, "%s is set per tool, not in defaults: move it under the tools that need it", f.Key)
		case slices.Contains(depFields, f.Key):
			d.errf(f.Where, "%s belongs to a dependency: declare one under dependencies and name it in each tool's dependency field", f.Key)
		default:
			d.unknown(f, policyFields)
		}
	}
}

// policyField decodes a field shared by defaults and tools; it reports
// whether f was one.
func (d *decoder) policyField(f entry, p *policySpec) bool {
	switch f.Key {
	case "retries":
		p.retries = d.count(f.Value, f.Where, "use 0 for a single attempt, 3 for up to 4 attempts")
		if p.retries.set && p.retries.v > MaxRetries {
			d.errf(f.Where, "retries %d is more than %d, the most a policies file allows: each retry adds load to an upstream that is already failing; use at most %d, with a longer backoff if it needs time to recover",
				p.retries.v, MaxRetries, MaxRetries)
			p.retries = opt[int]{}
		}
	case "timeout":
		p.timeout = d.duration(f.Value, f.Where, "use 0 for no limit per attempt")
	case "deadline":
		p.deadline = d.duration(f.Value, f.Where, "use 0 for no deadline")
	case "tracing":
		p.tracing = d.boolean(f.Value, f.Where)
	case "backoff":
		for _, b := range d.Mapping(f.Value, f.Where) {
			switch b.Key {
			case "base":
				p.base = d.duration(b.Value, b.Where, "use 0 for no wait")
			case "max":
				p.max = d.duration(b.Value, b.Where, "use 0 for no cap")
			case "multiplier":
				p.multiplier = d.number(b.Value, b.Where)
				if p.multiplier.set && p.multiplier.v < 0 {
					d.errf(b.Where, "multiplier %v is negative: use 1 for a constant wait, 2 to double it each time", p.multiplier.v)
				}
			case "jitter":
				p.jitter = d.number(b.Value, b.Where)
				if p.jitter.set && (p.jitter.v < 0 || p.jitter.v > 1) {
					d.errf(b.Where, "jitter %v is outside [0, 1]: it is the largest fraction added to a wait, 0.25 turns 1s into 1s..1.25s", p.jitter.v)
				}
			default:
				d.unknown(b, backoffFields)
			}
		}
	case "calls":
		for _, c := range d.Mapping(f.Value, f.Where) {
			switch c.Key {
			case "identical":
				p.identical = d.callLimit(c)
			case "per_tool":
				p.perTool = d.callLimit(c)
			case "total":
				p.total = d.callLimit(c)
			case "repeats":
				p.repeats = d.enum(c.Value, c.Where, repeatsRefuse, repeatsAllow)
			default:
				d.unknown(c, callsFields)
			}
		}
	default:
		return false
	}
	return true
}

// The values of calls.repeats.
const (
	repeatsRefuse = "refuse"
	repeatsAllow  = "allow"
)

// callLimit decodes one limit of calls per run: a whole number from 1 to
// MaxCallLimit.
func (d *decoder) callLimit(c entry) opt[int] {
	n := d.count(c.Value, c.Where, "use a positive number, or leave the field out for no limit")
	switch {
	case !n.set:
	case n.v == 0:
		d.errf(c.Where, "%s 0 would refuse every call: use a positive number, or leave the field out for no limit", c.Key)
		return opt[int]{}
	case n.v > MaxCallLimit:
		d.errf(c.Where, "%s %d is more than %d, the most a policies file allows: a run of an agent makes tens of calls; use a limit that stops a model repeating itself",
			c.Key, n.v, MaxCallLimit)
		return opt[int]{}
	}
	return n
}
