package policyfile

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/run"
)

// Describe returns the chain of layers the tool called name gets from c,
// outermost first in the order of toolsafe.Layers, ending in the tool
// itself, on one line, such as "surface → args schema →
// fallback(archive_search) → deadline 30s → retry 3 (500ms..30s ×2 +25%) →
// approval every attempt → breaker billing → bulkhead billing(8) → timeout
// 2s → tool fetch_invoice". A tool the file does not name gets the
// defaults. Layers that are off are left out; surface is always there;
// options added with With are not described.
func (c *File) Describe(name string) string {
	r := c.resolve(name)
	parts := map[string]string{"surface": "surface"} // by the layer each describes
	if r.tracing {
		parts["call span"] = "trace"
	}
	if r.argsSchema != nil {
		parts["args schema"] = "args schema"
	}
	if r.limited {
		parts["loop guard"] = describeLimits(r.limits)
	}
	if r.fallback != "" {
		if r.fallbackOn != nil {
			parts["fallback"] = fmt.Sprintf("fallback(%s on %s)", r.fallback, kindList(r.fallbackOn))
		} else {
			parts["fallback"] = fmt.Sprintf("fallback(%s)", r.fallback)
		}
	}
	if r.deadline > 0 {
		parts["deadline"] = "deadline " + r.deadline.String()
	}
	dep := c.deps[r.dependency]
	if r.retries > 0 {
		parts["retry"] = describeRetry(r, dep)
	}
	switch r.approval {
	case approvalPerCall:
		parts["approval"] = "approval per call"
	case approvalEveryAttempt:
		parts["approval"] = "approval every attempt"
	}
	if dep != nil {
		if dep.breaker != nil {
			parts["breaker"] = "breaker " + dep.name + sharedNote(dep)
		}
		if dep.concurrency.v > 0 {
			parts["bulkhead"] = describeBulkhead(dep)
		}
	}
	if r.timeout > 0 {
		parts["timeout"] = "timeout " + r.timeout.String()
	}
	var chain []string
	for _, layer := range toolsafe.Layers() { // in the order New stacks them
		if p, ok := parts[layer]; ok {
			chain = append(chain, p)
		}
	}
	chain = append(chain, strings.TrimSpace("tool "+name)) // "tool" alone for the defaults' ""
	return strings.Join(chain, " → ")
}

// describeRetry describes the retry of the resolved tool r of dependency
// dep (nil for none).
func describeRetry(r resolved, dep *depSpec) string {
	notes := []string{describeBackoff(r.backoff.OrDefault())}
	if dep != nil && dep.retryBudget.v > 0 {
		notes = append(notes, fmt.Sprintf("budget %s %s%s", dep.name, percent(dep.retryBudget.v), sharedNote(dep)))
	}
	switch r.sideEffects {
	case sideEffectsIdempotent:
		notes = append(notes, "same idempotency key")
	case sideEffectsNot:
		notes = append(notes, "not after a timeout")
	}
	return fmt.Sprintf("retry %d (%s)", r.retries, strings.Join(notes, "; "))
}

// describeBulkhead describes dep's bulkhead.
func describeBulkhead(dep *depSpec) string {
	if dep.maxWait.v > 0 {
		return fmt.Sprintf("bulkhead %s(%d, wait %v)", dep.name, dep.concurrency.v, dep.maxWait.v)
	}
	return fmt.Sprintf("bulkhead %s(%d)", dep.name, dep.concurrency.v)
}

// DescribeDependency returns what the dependency called name has, such as
// "breaker: opens after 5 failures in the last 10 attempts, stays open 30s,
// then 1 probe; bulkhead: 8 attempts in flight, wait up to 1s; retry
// budget: 20% of attempts in flight" (and, for one with shared: redis,
// that its breaker and budget are the fleet's), "nothing (a name only)"
// for one declared with no fields, or "" when the file declares no such
// dependency.
func (c *File) DescribeDependency(name string) string {
	d := c.deps[name]
	if d == nil {
		return ""
	}
	var parts []string
	if b := d.breaker; b != nil {
		// The zeros of a policy.Breaker mean the defaults.
		failures := cmp.Or(b.FailureThreshold, policy.DefaultFailureThreshold)
		probes := cmp.Or(b.Probes, policy.DefaultProbes)
		opens := fmt.Sprintf("%d failures in a row", failures)
		if b.Window > failures {
			opens = fmt.Sprintf("%d failures in the last %d attempts", failures, b.Window)
		}
		parts = append(parts, fmt.Sprintf("breaker: opens after %s, stays open %v, then %d probe%s",
			opens, cmp.Or(b.Delay, policy.DefaultBreakerDelay), probes, plural(int(probes))))
	}
	if d.concurrency.v > 0 {
		s := fmt.Sprintf("bulkhead: %d attempt%s in flight", d.concurrency.v, plural(d.concurrency.v))
		if d.maxWait.v > 0 {
			s += fmt.Sprintf(", wait up to %v", d.maxWait.v)
		} else {
			s += ", no wait"
		}
		parts = append(parts, s)
	}
	if d.retryBudget.v > 0 {
		if d.isShared() {
			parts = append(parts, fmt.Sprintf("retry budget: %s of the fleet's attempts over a sliding window", percent(d.retryBudget.v)))
		} else {
			parts = append(parts, fmt.Sprintf("retry budget: %s of attempts in flight", percent(d.retryBudget.v)))
		}
	}
	if d.isShared() {
		parts = append(parts, fmt.Sprintf("shared through %s by every replica: the breaker's state and the retry budget's counts (the bulkhead stays per replica)", d.shared.v))
	}
	if len(parts) == 0 {
		return "nothing (a name only)"
	}
	return strings.Join(parts, "; ")
}

// sharedNote is " shared" for a dependency shared through a store.
func sharedNote(d *depSpec) string {
	if d.isShared() {
		return " (shared: " + d.shared.v + ")"
	}
	return ""
}

// describeBackoff writes a Backoff as "500ms..30s ×2 +25%": the first wait,
// the cap, the growth and the most jitter adds.
func describeBackoff(b policy.Backoff) string {
	if b.Base <= 0 {
		return "no wait"
	}
	var s string
	switch {
	case b.Multiplier == 0 || b.Multiplier == 1:
		s = b.Base.String() + " each"
		if b.Max > 0 && b.Max < b.Base {
			s = b.Max.String() + " each"
		}
	case b.Max > 0:
		s = fmt.Sprintf("%v..%v ×%s", b.Base, b.Max, strconv.FormatFloat(b.Multiplier, 'g', -1, 64))
	default:
		s = fmt.Sprintf("%v ×%s uncapped", b.Base, strconv.FormatFloat(b.Multiplier, 'g', -1, 64))
	}
	if b.Jitter > 0 {
		s += " +" + percent(b.Jitter)
	}
	return s
}

func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'g', 4, 64) + "%"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// describeLimits writes the loop guard's limits as "loop guard (identical
// 3, per tool 10, total 50)", or "loop guard (repeats allowed)".
func describeLimits(l run.Limits) string {
	var ps []string
	for _, f := range []struct {
		name string
		n    int
	}{{"identical", l.Identical}, {"per tool", l.PerTool}, {"total", l.Total}} {
		if f.n > 0 {
			ps = append(ps, fmt.Sprintf("%s %d", f.name, f.n))
		}
	}
	if l.AllowRepeats {
		ps = append(ps, "repeats allowed")
	}
	if len(ps) == 0 {
		return "loop guard"
	}
	return "loop guard (" + strings.Join(ps, ", ") + ")"
}
