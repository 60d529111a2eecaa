package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// health follows which parts of Redis answer. An outage is scoped to a
// shard: on a cluster client, the master that owned the slot of the key
// whose operation failed (by its address, as the client's slot map said
// then); on any other client, the whole Redis (shard ""). It begins at the
// first operation on the shard that fails and ends when a background
// recheck of that key answers; operations on keys of other shards go on
// meanwhile.
type health struct {
	s         *Store
	outages   atomic.Int64 // outages begun since New
	down      atomic.Int32 // shards down now, a misrouted Store included; 0: every operation is tried
	misrouted atomic.Bool  // a MOVED or ASK reached a client that is not a cluster's
	local     atomic.Int64 // decisions taken locally since New
	refusals  atomic.Int64 // grant and ledger operations refused since New

	mu     sync.Mutex
	shards map[string]*outage   // the shards down, by ID
	ended  map[string]time.Time // when each shard's last outage ended
	scopes []*scope             // the breakers' keys, told of the outages of their shards
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

// outage is a shard's current outage.
type outage struct {
	shard string
	key   string // the key whose operation failed: the recheck asks its node
	n     int64  // its number among the Store's outages; 0 for a flap
	since time.Time
	local int64 // health.local and refusals when it began
	refd  int64
}

// scope counts the outages that covered the shard of one key: a breaker
// forgets what it learned from Redis, and sets its local breaker from the
// fleet's state, once per outage of its own shard.
type scope struct {
	key     string
	outages atomic.Int64
}

func newHealth(s *Store) *health {
	return &health{s: s, stop: make(chan struct{}), shards: map[string]*outage{}, ended: map[string]time.Time{}}
}

// watch returns the scope of key, told of every outage of its shard from
// now on.
func (h *health) watch(key string) *scope {
	sc := &scope{key: key}
	h.mu.Lock()
	h.scopes = append(h.scopes, sc)
	h.mu.Unlock()
	return sc
}

// shardOf names the shard of key: on a cluster client the address of the
// master that owns its slot in the client's slot map, "" when it cannot
// tell (no slot map yet) and on any other client.
func (s *Store) shardOf(key string) string {
	if s.cluster == nil || key == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	c, err := s.cluster.MasterForKey(ctx, key)
	if err != nil {
		return ""
	}
	return c.Options().Addr
}

// available reports whether operations on key are tried: no outage covers
// its shard. It costs one atomic load while no shard is down.
func (h *health) available(key string) bool {
	if h.down.Load() == 0 {
		return true
	}
	if h.misrouted.Load() {
		return false
	}
	shard := h.s.shardOf(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, whole := h.shards[""]
	_, own := h.shards[shard]
	return !whole && !own
}

// fail records that op on key failed with err: the first failure of its
// shard's outage counts it, logs it (WARN without the error's text, which
// goes to DEBUG) and starts the shard's recheck.
//
// A failure within one recheck interval of the end of the shard's last
// outage (Redis that answered one recheck and failed the next operation,
// such as one on a connection it reset as it restarted) is a flap: it is
// logged at DEBUG only, and becomes an outage of its own, counted and
// logged, only if the next recheck fails too.
func (h *health) fail(op operation, key string, err error) {
	shard := h.s.shardOf(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, down := h.shards[shard]; down || h.closed {
		return
	}
	o := &outage{shard: shard, key: key}
	h.shards[shard] = o
	h.down.Add(1)
	ended := h.ended[shard]
	flap := !ended.IsZero() && time.Since(ended) < h.s.cfg.recheck
	if flap {
		h.s.logger().Debug("redisstore: redis failed again just after it answered", h.attrs(o, "operation", string(op), "error", err.Error())...)
	} else {
		h.beginLocked(o, op)
		h.s.logger().Debug("redisstore: redis is unavailable", h.attrs(o, "operation", string(op), "error", err.Error())...)
	}
	h.wg.Add(1)
	go h.recheck(o, flap)
}

// attrs are the attributes of o's log lines, then more.
func (h *health) attrs(o *outage, more ...any) []any {
	a := []any{"prefix", h.s.cfg.prefix}
	if h.s.cluster != nil {
		a = append(a, "node", o.shard)
	}
	return append(a, more...)
}

// beginLocked begins an outage of o's shard: it is counted and logged
// once, and the scopes of the shard's keys are told.
func (h *health) beginLocked(o *outage, op operation) {
	o.n = h.outages.Add(1)
	o.since = time.Now()
	o.local, o.refd = h.local.Load(), h.refusals.Load()
	for _, sc := range h.scopes {
		if o.shard == "" || h.s.shardOf(sc.key) == o.shard {
			sc.outages.Add(1)
		}
	}
	h.s.m.outages.Add(context.Background(), 1)
	what := "redis is unavailable"
	if h.s.cluster != nil {
		what = "a redis cluster master is unavailable"
		if o.shard == "" {
			what = "the redis cluster is unavailable"
		}
	}
	h.s.logger().Warn("redisstore: "+what+"; breakers and retry budgets decide locally, grants and run ledgers refuse, until it answers again",
		h.attrs(o, "operation", string(op), "outage", o.n)...)
}

// misroute puts the Store out of use for good: op got a MOVED or ASK
// reply, so its client is a client of one node of a Redis Cluster, which
// holds only some of the keys. It is counted as an outage and logged once
// at WARN with the fix.
func (h *health) misroute(op operation, err error) {
	if !h.misrouted.CompareAndSwap(false, true) {
		return
	}
	h.down.Add(1)
	n := h.outages.Add(1)
	h.mu.Lock()
	for _, sc := range h.scopes {
		sc.outages.Add(1)
	}
	h.mu.Unlock()
	h.s.m.outages.Add(context.Background(), 1)
	h.s.logger().Warn("redisstore: redis is a Redis Cluster and the Store's client talks to one node of it: every operation is refused (breakers and retry budgets decide locally, grants and run ledgers refuse); make the client with redis.NewClusterClient(redisstore.ClusterOptions(addrs...))",
		"prefix", h.s.cfg.prefix, "operation", string(op), "outage", n)
	h.s.logger().Debug("redisstore: the reply that told the Store it talks to one node of a cluster", "prefix", h.s.cfg.prefix, "error", err.Error())
}

// recheck asks o's node for o's key every recheck interval until it
// answers, then ends the outage. After a flap, a recheck that fails begins
// an outage.
func (h *health) recheck(o *outage, flap bool) {
	defer h.wg.Done()
	t := time.NewTicker(h.s.cfg.recheck)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		err := h.s.probe(o.key)
		h.mu.Lock()
		if err != nil {
			if flap {
				flap = false
				h.beginLocked(o, "recheck")
			}
			h.mu.Unlock()
			continue
		}
		delete(h.shards, o.shard)
		h.ended[o.shard] = time.Now()
		h.down.Add(-1)
		h.mu.Unlock()
		if flap {
			h.s.logger().Debug("redisstore: redis answers again", h.attrs(o, "outage", h.outages.Load())...)
			return
		}
		h.s.m.recoveries.Add(context.Background(), 1)
		h.s.logger().Info("redisstore: redis answers again; breakers and retry budgets share their state again",
			h.attrs(o, "outage", o.n,
				"unavailable_for", time.Since(o.since).Round(time.Millisecond).String(),
				"local_decisions", h.local.Load()-o.local, "refused_operations", h.refusals.Load()-o.refd)...)
		return
	}
}

// probe asks Redis whether it serves key again: on a cluster client, its
// slot map is loaded again and key's node asked (EXISTS, routed and
// redirected as every command); on any other client, PING.
func (s *Store) probe(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	if s.cluster == nil {
		return s.client.Ping(ctx).Err()
	}
	s.cluster.ReloadState(ctx) // in the background: the next probe uses it
	if key == "" {
		return s.cluster.Ping(ctx).Err()
	}
	return s.cluster.Exists(ctx, key).Err()
}

// decidedLocally counts a breaker's or a budget's decision taken without
// Redis.
func (h *health) decidedLocally(st stateKind) {
	h.local.Add(1)
	h.s.m.local.Add(context.Background(), 1, st.set())
}

// refused counts a grant or ledger operation refused for Redis's outage.
func (h *health) refused(st stateKind) {
	h.refusals.Add(1)
	h.s.m.refused.Add(context.Background(), 1, st.set())
}

func (h *health) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// digest is a short hash of s for keys: 128 bits of SHA-256, in hex.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
