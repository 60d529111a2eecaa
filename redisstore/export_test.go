package redisstore

import "github.com/failsafe-go/failsafe-go/circuitbreaker"

// OnChange makes f be called with the state each time b takes in a change
// published by a replica, so tests wait on a signal instead of on time. f
// runs with b's lock held: it must not call b's methods.
func OnChange(b *Breaker, f func(circuitbreaker.State)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onChange = func() { f(b.state) }
}

// Subscribed returns a channel closed once s has subscribed to the
// breakers' changes (its first breaker subscribes it).
func Subscribed(s *Store) <-chan struct{} { return s.changes.ready }

// BeginScriptHash is the SHA1 of the ledger's begin script, as EVALSHA
// names it.
func BeginScriptHash() string { return beginScript.Hash() }

// BreakerKey returns the key of b's state in Redis.
func BreakerKey(b *Breaker) string { return b.keys[0] }

// BudgetKey returns the key of b's window in Redis.
func BudgetKey(b *Budget) string { return b.keys[0] }

// OldKeys returns Grants of s that keep everything where a redisstore
// before the keys' hash tags held the prefix kept it ("PREFIX:{grants}:..."):
// a replica of the older version.
func OldKeys(s *Store) *Grants { return &Grants{s: s, old: true} }
