package redisstore

import "strings"

// The names of every key the Store writes are made here. Each begins with
// a hash tag that holds the prefix ("{PREFIX:KIND:NAME}"), so that on a
// Redis Cluster the keys a script uses together share a slot, and the keys
// of two fleets (two prefixes) share one only by the chance of any two
// tags, never by construction. The README's "Redis keys and their TTLs"
// lists them.

// tagged returns the key "{PREFIX:kind:name}", then ":" and each part.
func (s *Store) tagged(kind, name string, parts ...string) string {
	var b strings.Builder
	b.WriteString("{" + s.cfg.prefix + ":" + kind + ":" + name + "}")
	for _, p := range parts {
		b.WriteString(":" + p)
	}
	return b.String()
}

// key joins the Store's prefix and parts with ":": the keys of versions
// before the tags held the prefix ("PREFIX:{grants}:..."), which
// Grants.ReadOldKeys reads, and the channel of breaker changes (a channel
// has no slot).
func (s *Store) key(parts ...string) string {
	return s.cfg.prefix + ":" + strings.Join(parts, ":")
}

// breakerKeys are a breaker's state hash and its set of half-open permits.
func (s *Store) breakerKeys(dependency string) []string {
	k := s.tagged("breaker", nameInKey(dependency))
	return []string{k, k + ":probes"}
}

// budgetKey is a retry budget's hash of buckets.
func (s *Store) budgetKey(dependency string) string {
	return s.tagged("budget", nameInKey(dependency))
}

// runKeys are a run ledger's hash and its sorted sets of entries dropped
// first and last.
func (s *Store) runKeys(runID string) []string {
	k := s.tagged("run", nameInKey(runID))
	return []string{k, k + ":drop", k + ":keep"}
}

// grantGroups is how many groups a Store's grants, denials, pending
// requests and audit records are kept in: 16, by the first hex digit of
// the digest of a request's tool and input, each group in a hash slot of
// its own, so that a Redis Cluster spreads them over its masters.
const grantGroups = 16

// grantGroup is the key base of the group of the digest ti.
func (s *Store) grantGroup(ti string) string { return s.tagged("grants", ti[:1]) }

// grantGroupsAll are the key bases of every group, in order.
func (s *Store) grantGroupsAll() []string {
	out := make([]string, 0, grantGroups)
	for i := range grantGroups {
		out = append(out, s.tagged("grants", "0123456789abcdef"[i:i+1]))
	}
	return out
}

// oldGrantGroup is the key base of the one group of the versions before
// the groups (Grants.ReadOldKeys).
func (s *Store) oldGrantGroup() string { return s.key("{grants}") }

// grantKeys are, in group base, the decisions for the digest ti of a tool
// and input, then the pending requests (order, expiry, info, the count
// that numbered them in the versions before, since when, the approvals
// they had while they wait for a quorum).
func grantKeys(base, ti string) []string {
	return []string{base + ":decisions:" + ti, base + ":pending", base + ":expiry", base + ":info", base + ":seq", base + ":since", base + ":votes"}
}

// auditKey is group base's audit trail.
func auditKey(base string) string { return base + ":audit" }

// overflowKey is group base's hash of what its full list dropped: how
// many, and when the first and the latest (ms).
func overflowKey(base string) string { return base + ":overflow" }

// droppedKey is group base's sorted set of the requests its full list
// dropped (approval.EventDropped), as JSON.
func droppedKey(base string) string { return base + ":dropped" }

// refusalsKey is group base's sorted set of the refusals of requests of
// its tools and inputs (approval.EventRefused), as JSON.
func refusalsKey(base string) string { return base + ":refused" }
