package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe/run"

	"github.com/redis/go-redis/v9"
)

// Ledger returns a run ledger kept in Redis, so that a run paused on one
// replica resumes on another (see Ledger).
func (s *Store) Ledger() *Ledger { return &Ledger{s: s} }

// Ledger is a run.Ledger kept in Redis, shared by every replica: a
// run scoped with run.With on one replica and resumed on another
// (run.Resume) answers the calls completed before the pause from it
// instead of calling their tools again. While Redis is unavailable its
// methods fail closed with ErrUnavailable. Make one with Store.Ledger and
// set its fields before its first use, the same in every replica. A Ledger
// is safe for concurrent use.
type Ledger struct {
	// TTL is how long a run is kept after its last call or read; zero
	// means run.DefaultLedgerTTL (24 hours).
	TTL time.Duration
	// MaxEntries caps the entries of one run: past it the oldest entry of
	// a tool that only reads is dropped first, then the oldest (its call
	// runs again on resume); zero means run.DefaultLedgerEntries
	// (1,000).
	MaxEntries int

	s *Store
}

var _ run.Ledger = (*Ledger)(nil)

func (l *Ledger) ttl() time.Duration {
	if l.TTL > 0 {
		return l.TTL
	}
	return run.DefaultLedgerTTL
}

func (l *Ledger) maxEntries() int64 {
	if l.MaxEntries > 0 {
		return int64(l.MaxEntries)
	}
	return run.DefaultLedgerEntries
}

func (l *Ledger) key(runID string) string { return l.s.key("run", nameInKey(runID)) }

// Append adds e to the entries of run, after those already there, drops
// entries beyond MaxEntries (reads first) and keeps the run TTL from now. It returns
// an error wrapping ErrUnavailable when Redis is unavailable.
func (l *Ledger) Append(ctx context.Context, runID string, e run.Entry) error {
	if l.s == nil {
		return errNoLedgerStore
	}
	data, err := json.Marshal(storedEntry{Entry: e, Tool: []byte(e.Tool), Input: []byte(e.Input), Output: []byte(e.Output)})
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	k := l.key(runID)
	err = l.s.do(ctx, opAppend, func(ctx context.Context) error {
		return appendScript.Run(ctx, l.s.client, []string{k}, data, l.maxEntries(), l.ttl().Milliseconds()).Err()
	})
	if err != nil {
		l.s.health.refused(stateLedger)
	}
	return err
}

// Entries returns the entries of run, oldest first (none for a run Redis
// does not keep), and keeps the run TTL from now: a resumed run reads it.
// It returns an error wrapping ErrUnavailable when Redis is unavailable,
// and an error when an entry in Redis is not valid: a replay is then not
// trusted.
func (l *Ledger) Entries(ctx context.Context, runID string) ([]run.Entry, error) {
	if l.s == nil {
		return nil, errNoLedgerStore
	}
	k := l.key(runID)
	var raw *redis.StringSliceCmd
	err := l.s.do(ctx, opEntries, func(ctx context.Context) error {
		_, err := l.s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			raw = p.LRange(ctx, k, 0, -1)
			p.PExpire(ctx, k, l.ttl())
			return nil
		})
		return err
	})
	if err != nil {
		l.s.health.refused(stateLedger)
		return nil, err
	}
	vals := raw.Val()
	if len(vals) == 0 {
		return nil, nil
	}
	out := make([]run.Entry, len(vals))
	for i, v := range vals {
		var se storedEntry
		if err := json.Unmarshal([]byte(v), &se); err != nil {
			return nil, fmt.Errorf("redisstore: entry %d of run %s in Redis is not valid: %w", i+1, runID, err)
		}
		out[i] = se.Entry
		out[i].Tool, out[i].Input, out[i].Output = string(se.Tool), string(se.Input), string(se.Output)
	}
	return out, nil
}

// storedEntry is an Entry as the ledger keeps it in Redis: its tool, input
// and output as bytes (base64 in the JSON), so that text that is not valid
// UTF-8, which JSON strings cannot carry, comes back byte for byte and a
// resumed run matches it.
type storedEntry struct {
	run.Entry
	Tool, Input, Output []byte
}

// appendScript appends ARGV[1] to the list KEYS[1], keeps at most ARGV[2]
// entries, dropping the oldest entries of tools that only read first (as
// run.TrimEntries does; json.Marshal writes "ReadOnly":true only as
// the field, a string's quotes being escaped), then the oldest, and keeps
// the list ARGV[3] ms from now.
var appendScript = redis.NewScript(`
redis.call('RPUSH', KEYS[1], ARGV[1])
local over = redis.call('LLEN', KEYS[1]) - tonumber(ARGV[2])
if over > 0 then
  local all = redis.call('LRANGE', KEYS[1], 0, -1)
  for i = 1, #all do
    if over == 0 then break end
    if string.find(all[i], '"ReadOnly":true', 1, true) then
      redis.call('LREM', KEYS[1], 1, all[i])
      over = over - 1
    end
  end
  if over > 0 then redis.call('LTRIM', KEYS[1], over, -1) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
`)

var errNoLedgerStore = fmt.Errorf("redisstore: this Ledger was not made by Store.Ledger")
