package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the Store's meter.
const ScopeName = "github.com/toolsafe/toolsafe/redisstore"

// The defaults of a Store's options.
const (
	// defaultPrefix begins every key's hash tag: "{toolsafe:...}".
	defaultPrefix = "toolsafe"
	// DefaultTimeout bounds every Redis operation: 50ms. An operation
	// that takes longer is given up and counts as Redis being unavailable.
	// On loopback an operation takes tens of microseconds.
	DefaultTimeout = 50 * time.Millisecond
	// defaultRecheck is how often an unavailable Redis is tried again
	// (PING, or the failed key's node of a cluster) until it answers: 500ms.
	defaultRecheck = 500 * time.Millisecond
	// defaultStateTTL is how long a breaker's or a retry budget's state
	// lives in Redis after its last change: 1 hour (an open breaker lives
	// at least until its delay is over). State that expired is the state
	// of a dependency nobody called: a closed breaker, an empty budget.
	defaultStateTTL = time.Hour
	// defaultPermitTTL is how long a half-open probe's permit is held in
	// Redis at most: 10s. A permit whose outcome was never recorded (the
	// replica that held it died) is free again after it, so a lost permit
	// cannot wedge the breaker half-open. Make it longer than the attempt
	// timeout of the dependency's tools.
	defaultPermitTTL = 10 * time.Second
	// defaultStateMaxAge is how long a breaker's state, as a replica last
	// learned it from Redis, is trusted without hearing from Redis again:
	// 1s. It is learned again in the background after half of it, and the
	// subscription to the breakers' changes is pinged as often.
	defaultStateMaxAge = time.Second
	// defaultBudgetWindow is the sliding window of a retry budget: 10s.
	defaultBudgetWindow = 10 * time.Second
	// DefaultBudgetMinRetries is how many retries a retry budget admits
	// in a window fleet-wide whatever the ratio: 3, so a dependency called
	// rarely can still have a failure retried.
	DefaultBudgetMinRetries = 3
)

// ErrUnavailable is the error, wrapped, of every operation that failed
// because Redis did not answer in time, could not be reached, or could not
// serve it (loading, a cluster that is down or moving the key's slot,
// retried within the timeout first), and of every operation skipped
// meanwhile. errors.Is(err, ErrUnavailable) tells it. Grants and Ledger
// return it, so toolsafe fails closed (no approval is assumed, a replay is
// not trusted); breakers and retry budgets never return it: they decide
// locally instead. On a Redis Cluster an outage covers the master that
// failed: operations on keys of the other masters go on. A client of one
// node pointed at a cluster (a MOVED or ASK reply) makes every operation
// fail with it from then on, after one WARN that names the fix
// (ClusterOptions). The error's text names the operation and what
// happened, never Redis's own words (they are logged at DEBUG).
var ErrUnavailable = errors.New("redisstore: redis is unavailable")

// Store keeps toolsafe's shared state in Redis for a fleet of replicas:
// circuit breakers, retry budgets, grants and run ledgers. Every replica
// makes one on the same Redis with the same prefix. Every Redis operation
// is bounded by the timeout (WithTimeout); once one fails, the Store sends
// nothing to that Redis (on a Redis Cluster, that master) until a recheck
// every WithRecheck interval answers, and breakers and budgets decide
// locally meanwhile. A Store is safe for
// concurrent use. Close stops its background work; it does not close the
// client.
type Store struct {
	client  onceClient           // the program's client, sending each script once
	cluster *redis.ClusterClient // the same, when it is a cluster's; else nil
	cfg     config
	replica string // this process in permit IDs: host, pid, random
	// incarnation names a breaker's hash when this replica creates it.
	incarnation string
	seq         atomic.Uint64
	health      *health
	changes     *changes
	m           *instruments
}

type config struct {
	prefix     string
	timeout    time.Duration
	recheck    time.Duration
	stateTTL   time.Duration
	permitTTL  time.Duration
	maxAge     time.Duration
	window     time.Duration
	minRetries int
	logger     *slog.Logger
	meter      metric.MeterProvider
	errs       []error
}

// Option configures a Store; the zero value of every option's argument
// keeps the default.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithPrefix sets the first part of every key's hash tag (default
// defaultPrefix, "toolsafe": "{toolsafe:breaker:billing}"), so several
// fleets, or tests, can share a Redis, and on a Redis Cluster their keys
// hash to slots of their own. A prefix holds letters, digits and "_.-:"
// only.
func WithPrefix(p string) Option {
	return optionFunc(func(c *config) {
		if p == "" {
			return
		}
		if !safeName(p) {
			c.errs = append(c.errs, fmt.Errorf("prefix %q: use letters, digits and _.-: only", p))
			return
		}
		c.prefix = p
	})
}

// durationOption sets a duration with set, unless d is zero (the
// default); a negative d is a problem named by what.
func durationOption(what string, d time.Duration, set func(*config)) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("%s %v is negative", what, d))
		} else if d > 0 {
			set(c)
		}
	})
}

// WithTimeout bounds every Redis operation (default DefaultTimeout, 50ms).
// A call's own context bounds the operations made for it too. It must not
// be negative.
func WithTimeout(d time.Duration) Option {
	return durationOption("timeout", d, func(c *config) { c.timeout = d })
}

// WithRecheck sets how often an unavailable Redis is tried again (default
// defaultRecheck, 500ms): PING, or on a Redis Cluster the failed key's own
// node (EXISTS, after asking for the slot map again). It must not be
// negative.
func WithRecheck(d time.Duration) Option {
	return durationOption("recheck interval", d, func(c *config) { c.recheck = d })
}

// WithStateTTL sets how long breaker and budget state lives in Redis after
// its last change (default defaultStateTTL, 1 hour). It must not be
// negative.
func WithStateTTL(d time.Duration) Option {
	return durationOption("state TTL", d, func(c *config) { c.stateTTL = d })
}

// WithPermitTTL sets how long a half-open probe's permit is held in Redis
// at most (default defaultPermitTTL, 10s). It must not be negative.
func WithPermitTTL(d time.Duration) Option {
	return durationOption("permit TTL", d, func(c *config) { c.permitTTL = d })
}

// WithStateMaxAge sets how long a breaker's state, as this replica last
// learned it, is trusted without hearing from Redis again (default
// defaultStateMaxAge, 1s): a safety net behind the subscription to the
// breakers' changes, which tells each change as it is made. The state is
// learned again in the background after half of it, and the subscription
// is pinged as often; one silent for longer is not trusted. It must not be
// negative.
func WithStateMaxAge(d time.Duration) Option {
	return durationOption("state max age", d, func(c *config) { c.maxAge = d })
}

// WithBudgetWindow sets the sliding window over which retry budgets
// compare retries with attempts (default defaultBudgetWindow, 10s), kept
// in ten buckets: a window of 10s counts the attempts of the last 9 to
// 10 seconds. It must be at least 100ms, or zero for the default.
func WithBudgetWindow(d time.Duration) Option {
	return optionFunc(func(c *config) {
		switch {
		case d == 0:
		case d < 100*time.Millisecond:
			c.errs = append(c.errs, fmt.Errorf("budget window %v is shorter than 100ms", d))
		default:
			c.window = d
		}
	})
}

// WithBudgetMinRetries sets how many retries a retry budget admits per
// window fleet-wide whatever its ratio (default DefaultBudgetMinRetries,
// 3). It must not be negative; zero keeps the default.
func WithBudgetMinRetries(n int) Option {
	return optionFunc(func(c *config) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("budget minimum of retries %d is negative", n))
		} else if n > 0 {
			c.minRetries = n
		}
	})
}

// WithLogger sets the logger of the Store's outage messages (default
// slog.Default() when the message is logged). Redis becoming unavailable
// is logged once per outage at WARN without the error's text, which goes
// to DEBUG; its return at INFO.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithMeterProvider sets the provider of the Store's meter (default the
// global one, otel.GetMeterProvider(), when New is called; it forwards to
// a provider set later). See the package documentation for the metrics.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meter = mp })
}

// New returns a Store on client: a *redis.Client on one Redis (make it
// with ClientOptions), a *redis.ClusterClient on a Redis Cluster (make it
// with ClusterOptions), or another kind of go-redis client. The client
// must bound its operations by their contexts (ContextTimeoutEnabled, as
// both sets), or a slow Redis could hold a call past the Store's timeout:
// New refuses a *redis.Client or *redis.ClusterClient without it. For
// another kind of client make sure of it yourself. The Store never has the
// client send a Lua script twice (a script may have run before its answer
// was lost), whatever its retry options. It returns an error naming every
// invalid option.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	cfg := config{
		prefix:     defaultPrefix,
		timeout:    DefaultTimeout,
		recheck:    defaultRecheck,
		stateTTL:   defaultStateTTL,
		permitTTL:  defaultPermitTTL,
		maxAge:     defaultStateMaxAge,
		window:     defaultBudgetWindow,
		minRetries: DefaultBudgetMinRetries,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if client == nil {
		cfg.errs = append(cfg.errs, errors.New("the client is nil: make one with redis.NewClient(redisstore.ClientOptions(addr)), or redis.NewClusterClient(redisstore.ClusterOptions(addrs...)) for a Redis Cluster"))
	} else if !contextTimeouts(client) {
		cfg.errs = append(cfg.errs, errors.New("the client does not bound its operations by their contexts: set ContextTimeoutEnabled in its options (redisstore.ClientOptions and ClusterOptions do)"))
	}
	if cc, ok := client.(*redis.ClusterClient); ok && len(cc.Options().Addrs) == 0 {
		cfg.errs = append(cfg.errs, errors.New("the cluster client has no node's address: give ClusterOptions at least one (redisstore.ClusterOptions(\"10.0.0.1:6379\", …)); the client learns the others from it"))
	}
	if len(cfg.errs) > 0 {
		return nil, fmt.Errorf("redisstore: %w", errors.Join(cfg.errs...))
	}
	if cfg.meter == nil {
		cfg.meter = otel.GetMeterProvider()
	}
	s := &Store{client: onceClient{client}, cfg: cfg, replica: replicaID(), m: newInstruments(cfg.meter)}
	s.cluster, _ = client.(*redis.ClusterClient)
	s.incarnation = s.replica
	s.health = newHealth(s)
	s.changes = newChanges(s)
	return s, nil
}

// contextTimeouts reports whether client bounds its operations by their
// contexts, when its kind tells.
func contextTimeouts(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

// ClientOptions returns options for a go-redis client of a Store on the
// Redis at addr ("127.0.0.1:6379"): dials, waits for a pooled connection,
// reads and writes bounded by their contexts (ContextTimeoutEnabled), so
// by the Store's timeout; one dial per try, and no retry of a failed
// command by the client (the Store falls back instead of waiting, and a
// script may have run before its answer was lost). Change what you need
// before redis.NewClient. For a Redis Cluster use ClusterOptions: a
// client of one node reaches only the keys of that node's slots, and the
// Store refuses to work through it (see ErrUnavailable).
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialerRetries:         1,
		MaxRetries:            -1,
	}
}

// clusterStateReload is how often, at most, a cluster client made with
// ClusterOptions loads the cluster's slot map again while it sends
// commands: 1s (go-redis's default is 60s). After a failover the Store's
// operations on the failed master's slots therefore reach its promoted
// replica within about a second; the Store also asks for the map again at
// each recheck of a shard that is down.
const clusterStateReload = time.Second

// ClusterOptions returns options for a go-redis cluster client of a Store
// on the Redis Cluster whose nodes include addrs (some or all of them,
// "127.0.0.1:7000"): every operation bounded by its context
// (ContextTimeoutEnabled), so by the Store's timeout; one dial per try; the
// slot map loaded again every second while commands flow (go-redis's
// default is a minute), at each recheck of a master that is down,
// and at once after a MOVED reply; MOVED and ASK redirects followed (up to
// go-redis's 3), a command whose connection failed not sent again (the
// Store never has a script sent twice). Work go-redis does without a
// caller's context (loading the slot map, dialing for it) is bounded by
// 1s. Change what you need before redis.NewClusterClient.
//
// Keys that a script uses together share a hash tag, so every operation
// is on one node; an outage is scoped to the master that failed (see
// ErrUnavailable). Run the cluster with cluster-require-full-coverage no,
// so that the masters that are up keep serving while a failed master's
// replica is promoted.
func ClusterOptions(addrs ...string) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                      addrs,
		ContextTimeoutEnabled:      true,
		DialerRetries:              1,
		MaxRetries:                 -1,
		DialTimeout:                time.Second,
		ReadTimeout:                time.Second,
		WriteTimeout:               time.Second,
		ClusterStateReloadInterval: clusterStateReload,
	}
}

// Close stops the Store's background work (the recheck of an unavailable
// Redis, the subscription to breaker changes, a retry budget's flush of
// its counts) and waits for it to end. It does not close the client. The Store must not
// be used after Close. Close is idempotent.
func (s *Store) Close() error {
	s.health.close()
	return nil
}

// Available reports whether the Store uses all of Redis now: false from
// an operation that failed until Redis answers a recheck. On a Redis
// Cluster, false while any master's outage lasts; operations on the other
// masters' keys go on meanwhile.
func (s *Store) Available() bool { return s.health.down.Load() == 0 }

// Ping asks Redis whether it answers this replica now, and starts an
// outage (Available reads false, WARN, the recheck) when it does not: a
// replica that makes no call learns of an outage only so, since only a
// failed operation starts one. On a Redis Cluster it pings a node, as
// go-redis's ClusterClient.Ping does. It waits at most the Store's
// timeout (WithTimeout), returns nil when Redis answered and an error
// wrapping ErrUnavailable when it did not or an outage lasts. otelhook's
// toolsafe.fleet_store.up gauge calls it at each collection.
func (s *Store) Ping(ctx context.Context) error {
	if !s.Available() {
		return fmt.Errorf("%w: an outage lasts (the recheck ends it once Redis answers)", ErrUnavailable)
	}
	return s.do(ctx, opPing, "", func(ctx context.Context) error {
		if s.cluster != nil {
			return s.cluster.Ping(ctx).Err()
		}
		return s.client.Ping(ctx).Err()
	})
}

// Outages returns how many outages began since New: on a Redis Cluster,
// one per master that failed, each time it failed.
func (s *Store) Outages() int64 { return s.health.outages.Load() }

// async runs f on a goroutine of the Store's, which Close waits for, and
// reports whether it did: not once the Store is closed.
func (s *Store) async(f func()) bool {
	h := s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// nameInKey returns name as it appears in a key: itself when it is short
// and made of letters, digits and "_.-:" only, else "~" and a hash of it
// (so a name can hold anything, braces included, and a key stays short).
func nameInKey(name string) string {
	if safeName(name) && len(name) <= 100 && !strings.HasPrefix(name, "~") {
		return name
	}
	return "~" + digest(name)
}

func safeName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-', r == ':':
		default:
			return false
		}
	}
	return true
}

// replicaID names this process in permit IDs, for an operator reading
// Redis: host, pid and a random part, so two processes never collide.
func replicaID() string {
	host, _ := os.Hostname()
	if !safeName(host) || len(host) > 40 {
		host = "host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// nextID returns a permit ID no other permit of the fleet has.
func (s *Store) nextID() string {
	return fmt.Sprintf("%s-%d", s.replica, s.seq.Add(1))
}

func (s *Store) logger() *slog.Logger {
	if s.cfg.logger != nil {
		return s.cfg.logger
	}
	return slog.Default()
}
