package policyfile

import (
	"fmt"
	"maps"
	"slices"

	"github.com/toolsafe/toolsafe/policy"
)

// The values of a dependency's shared field.
const (
	sharedNone  = "none"
	sharedRedis = "redis"
)

// sharedKinds are the stores a dependency may share its state through.
var sharedKinds = []string{sharedRedis}

// Shared makes the state that the replicas of a fleet share for a
// dependency whose entry says shared: redis: its circuit breaker and its
// retry budget, so that failures count, the breaker opens and its probes
// are bounded fleet-wide, and retries stay within the budget's share of the
// fleet's attempts. The bulkhead stays per replica.
//
// *redisstore.Store (module github.com/toolsafe/toolsafe/redisstore) is
// one; give it to the File with WithShared. The file never holds where the
// store is: that comes from code (and, in the examples, from the
// environment: REDIS_ADDR).
type Shared interface {
	// CircuitBreaker returns the breaker of the dependency named
	// dependency, configured by b as policy.NewCircuitBreaker is, whose
	// state every replica shares. It is called once per dependency and
	// File.
	CircuitBreaker(dependency string, b policy.Breaker) (*policy.CircuitBreaker, error)
	// RetryBudget returns the retry budget of the dependency named
	// dependency: a retry is admitted while the fleet's retries stay
	// within ratio of its attempts (policy.Retry.Shared). It is called
	// once per dependency and File.
	RetryBudget(dependency string, ratio float64) (policy.SharedBudget, error)
}

// WithShared returns a File whose WrapAll makes the breaker and the retry
// budget of every dependency that says shared: kind with s: kind is
// "redis", the only kind so far. WrapAll reports a dependency that says
// shared: redis when no store was given for it, and a kind the file format
// does not know; a nil s removes the store. The File it returns shares c's
// breakers, bulkheads and budgets (those of a shared dependency are made
// by the store of the first WrapAll that needs them); c itself does not
// change.
func (c *File) WithShared(kind string, s Shared) *File {
	d := *c
	d.stores = maps.Clone(c.stores)
	if d.stores == nil {
		d.stores = map[string]Shared{}
	}
	if s == nil {
		delete(d.stores, kind)
	} else {
		d.stores[kind] = s
	}
	return &d
}

// sharedProblems adds the problems of the stores: a dependency shared
// through a kind with no store, a store given for a kind the format does
// not know.
func (c *File) sharedProblems(ps *problems) {
	for _, name := range c.depNames {
		d := c.deps[name]
		if !d.shared.set || d.shared.v == sharedNone || c.stores[d.shared.v] != nil {
			continue
		}
		ps.add(&Problem{Path: "dependencies." + name + ".shared", Dependency: name, Field: "shared",
			Line: d.shared.at.Line, Column: d.shared.at.Col,
			Message: fmt.Sprintf("shared: %s needs a store from code: call WithShared(%q, store) on the File before WrapAll, such as a *redisstore.Store on the Redis in REDIS_ADDR", d.shared.v, d.shared.v)})
	}
	for _, kind := range slices.Sorted(maps.Keys(c.stores)) {
		if !slices.Contains(sharedKinds, kind) {
			ps.add(&Problem{Message: fmt.Sprintf("WithShared(%q): a dependency can be shared through %s only", kind, nameList(sharedKinds))})
		}
	}
}

// isShared reports whether the dependency d shares its state through a
// store.
func (d *depSpec) isShared() bool { return d.shared.set && d.shared.v != sharedNone }
