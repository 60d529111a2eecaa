package redisstore

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// operation names a kind of Redis operation, in logs and metrics.
type operation string

const (
	opAcquire   operation = "breaker.acquire"
	opRecord    operation = "breaker.record"
	opForce     operation = "breaker.force"
	opPeek      operation = "breaker.refresh"
	opSubscribe operation = "breaker.subscribe"
	opAdmit     operation = "budget.admit"
	opFlush     operation = "budget.flush"
	opRemaining operation = "budget.remaining"
	opDecide    operation = "grants.decide"
	opGrant     operation = "grants.grant"
	opRevoke    operation = "grants.revoke"
	opPending   operation = "grants.pending"
	opAnswer    operation = "grants.answer"
	opAudit     operation = "grants.audit"
	opBegin     operation = "ledger.begin"
	opFinish    operation = "ledger.finish"
	opHolds     operation = "ledger.holds"
	opEntries   operation = "ledger.entries"
	opPing      operation = "store.ping"
)

var operations = []operation{opAcquire, opRecord, opForce, opPeek, opSubscribe, opAdmit, opFlush, opRemaining, opDecide, opGrant, opRevoke, opPending, opAnswer, opAudit, opBegin, opFinish, opHolds, opEntries, opPing}

// stateKind is the kind of shared state, in metrics.
type stateKind int

const (
	stateBreaker stateKind = iota
	stateBudget
	stateGrants
	stateLedger
)

var stateSets = [...]metric.MeasurementOption{
	stateBreaker: metric.WithAttributeSet(attribute.NewSet(attribute.String("toolsafe.redisstore.state", "breaker"))),
	stateBudget:  metric.WithAttributeSet(attribute.NewSet(attribute.String("toolsafe.redisstore.state", "budget"))),
	stateGrants:  metric.WithAttributeSet(attribute.NewSet(attribute.String("toolsafe.redisstore.state", "grants"))),
	stateLedger:  metric.WithAttributeSet(attribute.NewSet(attribute.String("toolsafe.redisstore.state", "ledger"))),
}

func (k stateKind) set() metric.MeasurementOption { return stateSets[k] }

// instruments are the Store's metrics (see the package documentation).
type instruments struct {
	outages    metric.Int64Counter
	recoveries metric.Int64Counter
	local      metric.Int64Counter
	refused    metric.Int64Counter
	duration   metric.Float64Histogram
	opSets     map[operation]metric.RecordOption
}

func newInstruments(mp metric.MeterProvider) *instruments {
	m := mp.Meter(ScopeName)
	in := &instruments{opSets: make(map[operation]metric.RecordOption, len(operations))}
	// The API returns a working no-op instrument along with any error.
	in.outages, _ = m.Int64Counter("toolsafe.redisstore.outages",
		metric.WithUnit("{outage}"),
		metric.WithDescription("Times Redis became unavailable (an operation failed or timed out); breakers and retry budgets then decide locally."))
	in.recoveries, _ = m.Int64Counter("toolsafe.redisstore.recoveries",
		metric.WithUnit("{recovery}"),
		metric.WithDescription("Times an unavailable Redis answered again and sharing resumed."))
	in.local, _ = m.Int64Counter("toolsafe.redisstore.local_decisions",
		metric.WithUnit("{decision}"),
		metric.WithDescription("Breaker permits and records, and retry budget decisions, taken by this replica alone because Redis was unavailable."))
	in.refused, _ = m.Int64Counter("toolsafe.redisstore.refusals",
		metric.WithUnit("{operation}"),
		metric.WithDescription("Grant and run ledger operations that failed closed because Redis was unavailable."))
	in.duration, _ = m.Float64Histogram("toolsafe.redisstore.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the Store's Redis operations, failed ones included."),
		metric.WithExplicitBucketBoundaries(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1))
	for _, op := range operations {
		in.opSets[op] = metric.WithAttributeSet(attribute.NewSet(attribute.String("toolsafe.redisstore.operation", string(op))))
	}
	return in
}

func (in *instruments) observe(op operation, d time.Duration) {
	in.duration.Record(context.Background(), d.Seconds(), in.opSets[op])
}
