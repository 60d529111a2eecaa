package otelhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolsafe/toolsafe/internal/typednil"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/policy"
)

// Gauges are what Hook.Observe shows as OpenTelemetry observable gauges,
// read when the meter provider's reader collects (a Prometheus scrape):
// what is open, busy and waiting right now. Every field may be empty; each
// element must not be nil (nor the zero policy.CircuitBreaker or
// policy.Bulkhead). Labels are bounded: dependency and tool names the
// program chose, and fixed words.
type Gauges struct {
	// Breakers are circuit breakers: *policy.CircuitBreaker (local, or one
	// made by redisstore and shared by the fleet) or a fleet's own breaker
	// (*redisstore.Breaker). Gauge toolsafe.circuit_breaker.state.
	Breakers []Breaker
	// Bulkheads are bulkheads (*policy.Bulkhead). Gauges
	// toolsafe.bulkhead.in_use and toolsafe.bulkhead.limit.
	Bulkheads []Bulkhead
	// Approvals are stores of grants whose pending requests a person
	// decides: *approval.Grants (local) or *redisstore.Grants (the fleet's,
	// at most one). Gauges toolsafe.approval.pending and
	// toolsafe.approval.oldest_age, by tool and scope: the local stores'
	// requests are summed, and the oldest of them shown.
	Approvals []Approvals
	// Stores holds the store a fleet shares its state through
	// (*redisstore.Store), as this replica sees it: at most one, since its
	// gauge, toolsafe.fleet_store.up, has no label of its own (Prometheus's
	// instance tells the replicas apart).
	Stores []FleetStore
	// Budgets are retry budgets shared by a fleet (*redisstore.Budget).
	// Gauge toolsafe.retry_budget.remaining.
	Budgets []RetryBudget
}

// Breaker is a circuit breaker whose state a gauge shows.
type Breaker interface {
	// Dependency names the breaker (label toolsafe.circuit_breaker.name).
	Dependency() string
	// State is the breaker's state.
	State() circuitbreaker.State
	// RemainingDelay is how long an open breaker stays open.
	RemainingDelay() time.Duration
}

// Bulkhead is a bulkhead whose permits gauges show.
type Bulkhead interface {
	// Dependency names the bulkhead (label toolsafe.bulkhead.name).
	Dependency() string
	// InUse is how many permits are held now.
	InUse() int
	// MaxConcurrent is how many permits there are.
	MaxConcurrent() int
}

// Approvals is a store of grants whose waiting requests gauges show.
type Approvals interface {
	// Backlog reports, per tool, how many requests wait and since when the
	// oldest. An error (a store that cannot be reached) leaves the store's
	// gauges out of that collection: unknown is not zero.
	Backlog(ctx context.Context) ([]approval.Backlog, error)
}

// FleetStore is a store shared by a fleet of replicas, which this replica
// can reach or not.
type FleetStore interface {
	// Available reports whether the store answers this replica now.
	Available() bool
}

// pinger is a FleetStore that can ask its store whether it answers
// (redisstore.Store.Ping): the up gauge asks it at each collection, so
// that a replica that makes no call learns of an outage too.
type pinger interface {
	Ping(ctx context.Context) error
}

// RetryBudget is a retry budget whose room a gauge shows.
type RetryBudget interface {
	// Dependency names the budget (label toolsafe.retry_budget.name).
	Dependency() string
	// Remaining is how many retries the budget would admit now. An error
	// leaves the budget's gauge out of that collection.
	Remaining(ctx context.Context) (int, error)
}

// Scopes, the values of ScopeKey.
const (
	// ScopeLocal is the scope of state kept in this process.
	ScopeLocal = "local"
	// ScopeFleet is the scope of state a fleet of replicas shares.
	ScopeFleet = "fleet"
)

// fleet is implemented by what a fleet of replicas shares (package
// redisstore's breakers, grants and budgets): Fleet returns true.
type fleet interface{ Fleet() bool }

// scopeOf is the scope of v: fleet when v, or the failsafe-go breaker a
// *policy.CircuitBreaker adopted, says so.
func scopeOf(v any) string {
	if cb, ok := v.(*policy.CircuitBreaker); ok {
		v = cb.CircuitBreaker
	}
	if f, ok := v.(fleet); ok && f.Fleet() {
		return ScopeFleet
	}
	return ScopeLocal
}

// breakerStates are the states a breaker gauge has a series for, in the
// words of BreakerFromKey.
var breakerStates = [...]circuitbreaker.State{circuitbreaker.ClosedState, circuitbreaker.HalfOpenState, circuitbreaker.OpenState}

// Observe registers gauges of what g holds with the Hook's meter provider
// (WithMeterProvider; else the global one as it is now, which forwards to
// a provider set later with otel.SetMeterProvider). They are read at each
// collection, never on a tool call's path:
//
//   - toolsafe.circuit_breaker.state {toolsafe.circuit_breaker.name,
//     toolsafe.circuit_breaker.state, toolsafe.scope}: 1 for the state each
//     breaker is in, 0 for the other two ("closed", "half-open", "open").
//     An open breaker whose delay has passed is "half-open": failsafe-go
//     lets the next attempt through as a probe (it moves to half-open as
//     that attempt asks), so "open" means calls are refused now;
//   - toolsafe.bulkhead.in_use and toolsafe.bulkhead.limit
//     {toolsafe.bulkhead.name}: permits held, and how many there are;
//   - toolsafe.approval.pending {gen_ai.tool.name, toolsafe.scope}: requests
//     waiting for a person, summed over the local stores of grants;
//     toolsafe.approval.oldest_age (s): how long the oldest has waited. A tool once seen with requests waiting is shown
//     with 0 after they are decided;
//   - toolsafe.fleet_store.up: 1 while the fleet's store answers this
//     replica, 0 while it does not (breakers and budgets then decide
//     locally, grants refuse); a store with a method Ping(ctx) error
//     (redisstore.Store) is pinged at each collection, so that an idle
//     replica reads 0 too;
//   - toolsafe.retry_budget.remaining {toolsafe.retry_budget.name,
//     toolsafe.scope}: retries the budget would admit now.
//
// toolsafe.scope is "fleet" for state a fleet shares (redisstore), else
// "local": a fleet's series are the same on every replica (take their max),
// a local one's are each replica's own (sum them).
//
// Unregister the returned registration to stop observing. Observe returns
// an error, and registers nothing, when g holds a nil element, nothing at
// all, two breakers, bulkheads or retry budgets of the same name and
// scope (their series would be one, and an open breaker could show closed),
// or the fleet's grants twice (each request would count twice);
// an error of the meter provider is returned too. Each call registers its
// own gauges: observe each value in one call only, as two calls that show
// the same name make the same mistake and are not detected.
func (h *Hook) Observe(g Gauges) (metric.Registration, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	mp := h.cfg.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName, metric.WithSchemaURL(SchemaURL))
	o := &observer{g: g, seen: map[approvalKey]bool{}}
	var errs []error
	var insts []metric.Observable
	int64Gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		in, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		insts = append(insts, in)
		return in
	}
	if len(g.Breakers) > 0 {
		o.state = int64Gauge("toolsafe.circuit_breaker.state", "{state}",
			"1 for the state each circuit breaker is in (closed, half-open, open), 0 for the others.")
		for _, b := range g.Breakers {
			o.breakers = append(o.breakers, newBreakerSets(b))
		}
	}
	if len(g.Bulkheads) > 0 {
		o.inUse = int64Gauge("toolsafe.bulkhead.in_use", "{permit}", "Bulkhead permits held now, abandoned attempts whose tool still runs included.")
		o.limit = int64Gauge("toolsafe.bulkhead.limit", "{permit}", "Bulkhead permits in all: the attempts that may run at once.")
		for _, b := range g.Bulkheads {
			o.bulkheads = append(o.bulkheads, metric.WithAttributeSet(attribute.NewSet(BulkheadKey.String(b.Dependency()))))
		}
	}
	if len(g.Approvals) > 0 {
		o.pending = int64Gauge("toolsafe.approval.pending", "{request}", "Requests waiting for a person's decision, by tool.")
		age, err := m.Float64ObservableGauge("toolsafe.approval.oldest_age", metric.WithUnit("s"),
			metric.WithDescription("How long the oldest request waiting for a person's decision has waited, by tool."))
		errs = append(errs, err)
		insts = append(insts, age)
		o.age = age
	}
	if len(g.Stores) > 0 {
		o.up = int64Gauge("toolsafe.fleet_store.up", "{store}", "1 while the store the fleet shares its state through answers this replica, else 0.")
	}
	if len(g.Budgets) > 0 {
		o.remaining = int64Gauge("toolsafe.retry_budget.remaining", "{retry}", "Retries the retry budget would admit now.")
		for _, b := range g.Budgets {
			o.budgets = append(o.budgets, metric.WithAttributeSet(attribute.NewSet(
				BudgetKey.String(b.Dependency()), ScopeKey.String(scopeOf(b)))))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m.RegisterCallback(o.observe, insts...)
}

// check reports a nil element or an empty g.
func (g Gauges) check() error {
	var errs []error
	n := 0
	field := func(name string, l int, isNil func(int) bool) {
		n += l
		for i := range l {
			if isNil(i) {
				errs = append(errs, fmt.Errorf("otelhook: Gauges.%s[%d] is nil%s: give the value to observe", name, i, zeroHint[name]))
			}
		}
	}
	// named refuses two elements with the same series: one would hide the
	// other (an open breaker shown closed), since the exporter keeps one
	// point per attribute set.
	named := func(field, what string, l int, key func(int) (string, bool)) {
		first := map[string]int{}
		for i := range l {
			k, ok := key(i)
			if !ok {
				continue
			}
			if j, dup := first[k]; dup {
				errs = append(errs, fmt.Errorf("otelhook: Gauges.%s[%d] and [%d] are both %s %q: their series would be one, showing either's state; give each %s once, and a name of its own to each distinct one", field, j, i, what, k, what))
				continue
			}
			first[k] = i
		}
	}
	field("Breakers", len(g.Breakers), func(i int) bool { return isNil(g.Breakers[i]) })
	named("Breakers", "breaker", len(g.Breakers), func(i int) (string, bool) {
		b := g.Breakers[i]
		if isNil(b) {
			return "", false
		}
		return b.Dependency() + " (" + scopeOf(b) + ")", true
	})
	field("Bulkheads", len(g.Bulkheads), func(i int) bool { return isNil(g.Bulkheads[i]) })
	named("Bulkheads", "bulkhead", len(g.Bulkheads), func(i int) (string, bool) {
		b := g.Bulkheads[i]
		if isNil(b) {
			return "", false
		}
		return b.Dependency(), true
	})
	field("Approvals", len(g.Approvals), func(i int) bool { return isNil(g.Approvals[i]) })
	// Local stores of grants are summed by tool; the fleet's are one store
	// in Redis however many *redisstore.Grants read it, and would count
	// each request once per value given.
	fleetGrants := -1
	for i, a := range g.Approvals {
		if isNil(a) || scopeOf(a) != ScopeFleet {
			continue
		}
		if fleetGrants >= 0 {
			errs = append(errs, fmt.Errorf("otelhook: Gauges.Approvals[%d] and [%d] both read the fleet's grants: each request would be counted twice; give the fleet's grants once", fleetGrants, i))
			continue
		}
		fleetGrants = i
	}
	field("Stores", len(g.Stores), func(i int) bool { return isNil(g.Stores[i]) })
	field("Budgets", len(g.Budgets), func(i int) bool { return isNil(g.Budgets[i]) })
	named("Budgets", "retry budget", len(g.Budgets), func(i int) (string, bool) {
		b := g.Budgets[i]
		if isNil(b) {
			return "", false
		}
		return b.Dependency() + " (" + scopeOf(b) + ")", true
	})
	if n == 0 {
		errs = append(errs, errors.New("otelhook: Gauges holds nothing to observe: give breakers, bulkheads, approvals, stores or budgets"))
	}
	if len(g.Stores) > 1 {
		errs = append(errs, fmt.Errorf("otelhook: Gauges.Stores holds %d stores: give the one this replica shares its state through (their gauge has no label to tell them apart)", len(g.Stores)))
	}
	return errors.Join(errs...)
}

// zeroHint says, by Gauges field, that its zero value counts as nil and
// how to build one that does not.
var zeroHint = map[string]string{
	"Breakers":  " (or the zero policy.CircuitBreaker: build it with policy.NewCircuitBreaker)",
	"Bulkheads": " (or the zero policy.Bulkhead: build it with policy.NewBulkhead)",
}

// isNil reports a nil interface, a typed nil, or a value that cannot work
// (the zero policy.CircuitBreaker or policy.Bulkhead).
func isNil(v any) bool {
	if typednil.Is(v) {
		return true
	}
	switch p := v.(type) {
	case *policy.CircuitBreaker:
		return p.Validate() != nil && p.CircuitBreaker == nil
	case *policy.Bulkhead:
		return p.Validate() != nil
	}
	return false
}

// breakerSets are the attribute sets of one breaker's three series.
type breakerSets struct {
	b    Breaker
	sets [len(breakerStates)]metric.ObserveOption
}

func newBreakerSets(b Breaker) breakerSets {
	bs := breakerSets{b: b}
	name, scope := BreakerKey.String(b.Dependency()), ScopeKey.String(scopeOf(b))
	for i, st := range breakerStates {
		bs.sets[i] = metric.WithAttributeSet(attribute.NewSet(name, BreakerStateKey.String(st.String()), scope))
	}
	return bs
}

// approvalKey is one series of the approval gauges: a scope (ScopeLocal,
// ScopeFleet) and a tool, numbered by observer.tool.
type approvalKey struct {
	scope string
	tool  int
}

// observer is one Observe's callback and what it reads.
type observer struct {
	g         Gauges
	state     metric.Int64ObservableGauge
	breakers  []breakerSets
	inUse     metric.Int64ObservableGauge
	limit     metric.Int64ObservableGauge
	bulkheads []metric.ObserveOption
	pending   metric.Int64ObservableGauge
	age       metric.Float64ObservableGauge
	up        metric.Int64ObservableGauge
	remaining metric.Int64ObservableGauge
	budgets   []metric.ObserveOption

	mu    sync.Mutex // a reader may collect while another does
	tools []string   // the tools seen waiting, numbered by their index
	seen  map[approvalKey]bool
}

func (o *observer) observe(ctx context.Context, obs metric.Observer) error {
	for _, bs := range o.breakers {
		now := bs.b.State()
		if now == circuitbreaker.OpenState && bs.b.RemainingDelay() <= 0 {
			now = circuitbreaker.HalfOpenState // the next attempt is a probe
		}
		for i, st := range breakerStates {
			v := int64(0)
			if st == now {
				v = 1
			}
			obs.ObserveInt64(o.state, v, bs.sets[i])
		}
	}
	for i, b := range o.g.Bulkheads {
		obs.ObserveInt64(o.inUse, int64(b.InUse()), o.bulkheads[i])
		obs.ObserveInt64(o.limit, int64(b.MaxConcurrent()), o.bulkheads[i])
	}
	o.observeApprovals(ctx, obs)
	for _, s := range o.g.Stores {
		if p, ok := s.(pinger); ok {
			_ = p.Ping(ctx) // a failure is an outage, which Available tells
		}
		v := int64(0)
		if s.Available() {
			v = 1
		}
		obs.ObserveInt64(o.up, v)
	}
	for i, b := range o.g.Budgets {
		if n, err := b.Remaining(ctx); err == nil {
			obs.ObserveInt64(o.remaining, int64(n), o.budgets[i])
		}
	}
	return nil
}

// observeApprovals observes the backlog by tool and scope, summed over the
// stores of one scope (several local Grants, one per group of tools, show
// one series per tool: each would hide the other), and 0 for the tools
// seen waiting before that wait no more. A store that cannot be read
// leaves its scope's series out of the collection: unknown is not zero,
// nor is a part of it the whole.
func (o *observer) observeApprovals(ctx context.Context, obs metric.Observer) {
	if len(o.g.Approvals) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	type waiting struct {
		requests int
		age      time.Duration // the oldest's, on its store's clock
	}
	sums := map[approvalKey]*waiting{}
	failed := map[string]bool{}
	for _, a := range o.g.Approvals {
		scope := scopeOf(a)
		backlog, err := a.Backlog(ctx)
		if err != nil {
			failed[scope] = true
			continue
		}
		for _, b := range backlog {
			k := approvalKey{scope, o.tool(b.Tool)}
			w := sums[k]
			if w == nil {
				w = &waiting{}
				sums[k] = w
			}
			w.requests += b.Requests
			age := b.Age
			if age == 0 {
				age = now.Sub(b.Oldest) // the store does not say
			}
			w.age = max(w.age, age)
		}
	}
	set := func(k approvalKey) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(semconv.GenAIToolName(o.tools[k.tool]), ScopeKey.String(k.scope)))
	}
	for k, w := range sums {
		if failed[k.scope] {
			continue
		}
		o.seen[k] = true
		obs.ObserveInt64(o.pending, int64(w.requests), set(k))
		obs.ObserveFloat64(o.age, max(w.age.Seconds(), 0), set(k))
	}
	for k := range o.seen {
		if failed[k.scope] || sums[k] != nil {
			continue
		}
		obs.ObserveInt64(o.pending, 0, set(k))
		obs.ObserveFloat64(o.age, 0, set(k))
	}
}

// tool returns the number of the tool named name, numbering it if new.
func (o *observer) tool(name string) int {
	for i, t := range o.tools {
		if t == name {
			return i
		}
	}
	o.tools = append(o.tools, name)
	return len(o.tools) - 1
}
