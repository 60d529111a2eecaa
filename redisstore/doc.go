// Package redisstore keeps toolsafe's shared state in Redis, so that the
// replicas of a fleet of agents act as one against the same upstreams: a
// dependency that is down opens the breaker of every replica after the
// configured failures of all of them, with half-open probes bounded
// fleet-wide; retries fleet-wide stay within the budget's
// share of the attempts; a grant given through one replica is used by
// another; a run paused on one replica resumes on another.
//
// It is a module of its own (github.com/toolsafe/toolsafe/redisstore), so
// that programs that do not use it do not pull go-redis.
//
//	client := redis.NewClient(redisstore.ClientOptions(os.Getenv("REDIS_ADDR")))
//	store, err := redisstore.New(client)
//	defer store.Close()
//
//	billing, err := store.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 5, Delay: 30 * time.Second})
//	budget, err := store.RetryBudget("billing", 0.2)
//	invoice := toolsafe.Wrap(fetchInvoice,
//		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.DefaultBackoff(), Shared: budget}),
//		toolsafe.WithCircuitBreaker(billing),
//		toolsafe.WithApproval(store.Grants()))
//	ctx = run.With(ctx, runID, store.Ledger())
//
// Or, from a policies file whose dependency says shared: redis:
//
//	tools, err := file.WithShared("redis", store).WrapAll(fetchInvoice, refund)
//
// Every replica makes its Store on the same Redis with the same prefix, and
// the same breakers and budgets: the same dependency names, the same
// settings. Redis's address comes from the program's configuration, never
// from the policies file.
//
// # What is shared, and how
//
// A circuit breaker (Store.CircuitBreaker) keeps its state, its count of
// failures and its half-open permits in Redis; every permit and every
// outcome that changes something is one Lua script, atomic, so replicas
// never race on the state. toolsafe's rules of what counts are kept: the
// breaker is adopted with policy.FromCircuitBreaker, so only transient
// failures and timeouts of attempts that reached the tool are recorded,
// and the caller's cancellation records nothing. Each change the script
// makes is published (Redis pub/sub); a replica whose subscription is live
// grants permits of a closed breaker and refuses those of an open one from
// the state it learned, so a healthy attempt waits for no Redis operation.
// Half-open permits always come from Redis: at most Breaker.Probes probes
// run at once fleet-wide, each permit expiring after the permit TTL
// (WithPermitTTL, 10s) if its outcome is never recorded.
//
// A retry budget (Store.RetryBudget, for policy.Retry.Shared) keeps the
// fleet's attempts and retries of a sliding window (WithBudgetWindow, 10s,
// in ten buckets) in Redis: a retry is admitted, by one Lua script, while
// the fleet's retries stay within the ratio of its attempts, or within a
// minimum (WithBudgetMinRetries, 3). First attempts are counted locally
// and sent in the background, every 100ms at most (FlushInterval).
//
// Grants (Store.Grants, a approval.Approver) keep grants, denials and
// pending requests, bound to a tool and its canonical input
// (canonical.JSON), used once, oldest first. A Ledger (Store.Ledger,
// a run.Ledger) keeps each run's entries in a list.
//
// The breaker is this package's, not sony/gobreaker's
// DistributedCircuitBreaker (v2.4.0): that one's Execute takes a lock in
// the store, busy-waiting for it, and holds it for the whole call, so the
// fleet's calls to a dependency would run one at a time; it returns the
// store's error as the call's; it judges every outcome a success or a
// failure, where toolsafe's cancellation counts neither way; and it has no
// half-open permit that expires. failsafe-go has no pluggable store.
//
// # Keys and their TTLs
//
// Every key begins with the prefix (WithPrefix, "toolsafe"); a name that is
// not made of letters, digits and "_.-:" only, or is longer than 100
// bytes, appears as "~" and a hash of it. Every key has a TTL, and none
// grows without bound:
//
//	{prefix}:{breaker:DEP}           hash: state, counts, the last outcomes   1h after its last change (WithStateTTL), and at least the open delay
//	{prefix}:{breaker:DEP}:probes    sorted set: half-open permits            the permit TTL (10s); at most Probes members
//	{prefix}:breakers                pub/sub channel of breaker changes       (a channel holds nothing)
//	{prefix}:{budget:DEP}            hash: ten buckets of attempts, retries   twice the window (20s)
//	{prefix}:{grants}:decisions:H    list: grants and denials of one call     the grant TTL (1h), from the latest; at most 100 (DefaultMaxDecisions)
//	{prefix}:{grants}:pending        sorted set: pending requests, in order   the grant TTL, from the latest; at most MaxPending (1,000)
//	{prefix}:{grants}:expiry         sorted set: when each request expires    the same
//	{prefix}:{grants}:info           hash: each request, as JSON              the same
//	{prefix}:{grants}:seq            counter: the order of requests           the same
//	{prefix}:run:RUN                 list: a run's entries, as JSON           the ledger TTL (24h), from its last call or read; at most MaxEntries (1,000)
//
// H is a hash of the tool and its canonical input. Keys that a script uses
// together share a hash tag ({...}), so they live on one node of a Redis
// Cluster.
//
// # When Redis is slow or down
//
// A failure of Redis is never a failure of a tool call. Every operation is
// bounded by the Store's timeout (WithTimeout, 50ms) and by the call's own
// context; the client must honour it (ClientOptions sets
// ContextTimeoutEnabled, and New refuses a client without it). The first
// operation that fails or times out, or the subscription to breaker
// changes breaking, begins an outage: it is logged once at WARN (the
// error's text only at DEBUG), counted in toolsafe.redisstore.outages,
// and from then on the Store sends nothing to Redis, so no call waits for
// it again. Meanwhile:
//
//   - breakers decide with a local failsafe-go breaker of the same
//     settings, started from the fleet's state as last learned (an open
//     breaker stays open), and retry budgets from this replica's own
//     attempts with the same ratio (toolsafe.redisstore.local_decisions);
//   - grants and ledgers fail closed and say so: their methods return an
//     error wrapping ErrUnavailable (toolsafe.redisstore.refusals). The
//     approval gate then pauses the call (approval.Required with
//     Err set: no approval is assumed), and a tool with side effects in a
//     resumed run refuses with tool-failed rather than trust or skip a
//     replay; a tool that only reads runs.
//
// A PING every recheck interval (WithRecheck, 500ms) ends the outage when
// Redis answers: it is logged at INFO and counted in
// toolsafe.redisstore.recoveries; breakers learn the fleet's state again at
// their next permit, budgets send the counts of the outage with their next
// operation. A failure within one recheck interval of the end of an outage
// is a flap: logged at DEBUG, and an outage of its own only if Redis still
// fails the next recheck.
//
// A Redis that restarts empty has lost the fleet's state: breakers are
// closed again, budgets empty, grants gone (calls pause again: fail
// closed), and run ledgers gone, so a run resumed afterwards calls again
// the tools whose calls had completed. Run Redis with persistence
// (appendonly yes) where the ledger must survive a restart.
//
// # Metrics and logs
//
// Through the OpenTelemetry metric API (WithMeterProvider; the global
// provider by default), under the meter named ScopeName:
// toolsafe.redisstore.outages, toolsafe.redisstore.recoveries,
// toolsafe.redisstore.local_decisions and toolsafe.redisstore.refusals
// (counters, by toolsafe.redisstore.state: breaker, budget, grants or
// ledger), and toolsafe.redisstore.operation.duration (a histogram in
// seconds, by toolsafe.redisstore.operation). Logs go to WithLogger's
// logger, slog.Default() by default.
//
// The scripts read Redis's clock (TIME) and publish from within: they need
// Redis 5 or later (tested on 7.0.15). Keys used together share a hash tag
// and the channel is published by the script, so they should work on a
// Redis Cluster too; that is not tested.
//
// # Proof
//
// The tests run on a real redis-server (REDIS_ADDR, or processes of their
// own that they kill and pause); one runs a paused run on three processes.
// go run -C redisstore ./bench/fleet runs 4 replica processes against a
// flaky upstream, with and without sharing, through an upstream outage and
// a Redis killed mid-run (see the README's "Many replicas").
package redisstore
