// Package redisstore keeps toolsafe's shared state in Redis, so that the
// replicas of a fleet of agents act as one: a breaker opened by the
// failures of all of them, half-open probes bounded fleet-wide, retries
// within one budget, grants usable on any replica, runs resumable on any
// replica. It is a module of its own, so that other programs do not pull
// go-redis.
//
//	client := redis.NewClient(redisstore.ClientOptions(os.Getenv("REDIS_ADDR")))
//	store, err := redisstore.New(client)
//	defer store.Close()
//	billing, err := store.CircuitBreaker("billing", policy.Breaker{FailureThreshold: 5})
//	invoice := toolsafe.Wrap(fetchInvoice, toolsafe.WithCircuitBreaker(billing))
//
// On a Redis Cluster make the client with ClusterOptions (several
// addresses), redis.NewClusterClient(redisstore.ClusterOptions(addrs...)):
// each script's keys share a hash tag that holds the prefix, so every
// operation is on one node; grants spread over 16 slots.
//
// Every replica makes its Store on the same Redis with the same prefix, and
// the same breakers and budgets (same dependency names, same settings). A
// policies file asks for a shared dependency with shared: redis, and
// File.WithShared gives it the Store; Redis's address comes from the
// program, never from the file.
//
// # When Redis is slow or down
//
// A failure of Redis is never a failure of a tool call. Every operation is
// bounded by the Store's timeout (WithTimeout, 50ms) and by the call's
// context; a reply that says it did not run (TRYAGAIN, CLUSTERDOWN,
// LOADING...) is sent again within it. The first that fails begins an
// outage, logged once at WARN; on a Redis Cluster it covers the master
// that failed only. Until a recheck every WithRecheck interval (500ms)
// answers (PING; on a cluster, the failed key's own node, after the slot
// map is loaded again), nothing waits for that Redis: breakers and budgets
// decide locally, from the fleet's state as last seen, and Grants and
// Ledger fail closed with an error wrapping ErrUnavailable: a tool with
// side effects in a scoped run is then not called (tool-busy, "temporarily
// unavailable"). A Redis that restarts
// empty has lost the fleet's state, ledgers and grants included: they
// survive a restart, a crash included, with "appendonly yes",
// "appendfsync always" and "maxmemory-policy noeviction". go-redis logs
// on its own, "connection pool: failed to dial" twice a second per client
// during an outage; route its lines to DEBUG with
// redis.SetLogger(redisstore.Logger(logger, slog.LevelDebug)).
//
// Every key's hash tag begins with the prefix (WithPrefix, "toolsafe":
// "{toolsafe:breaker:billing}"), and every key has a TTL; none grows
// without bound. Grants.ReadOldKeys reads what a version before kept
// ("toolsafe:{grants}:...") while a fleet moves. The scripts need Redis 5 or later. Metrics go
// through the OpenTelemetry meter named ScopeName. The README's "Many
// replicas" section lists the keys, the metrics and the fleet benchmark.
package redisstore
