package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
// instead of calling their tools again. Each call is one Lua script for
// its intent and one for its outcome, whatever the run's length. While
// Redis is unavailable its methods fail closed with ErrUnavailable. It
// survives a Redis restart only with Redis's append-only file on (see
// the package doc). Make one with Store.Ledger and set its fields before
// its first use, the same in every replica. It is safe for concurrent use.
type Ledger struct {
	// TTL is how long a run is kept after its last call; zero means
	// run.DefaultLedgerTTL (24 hours).
	TTL time.Duration
	// MaxEntries caps the entries of one run: past it the oldest entry
	// that will never be replayed (a read's, a failure's, a refusal's) is
	// dropped first, then the oldest (its call runs again on resume); zero
	// means run.DefaultLedgerEntries (1,000).
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

// keys are the run's keys, in one hash slot: its hash of entries and
// counts, and the sorted sets of its entries dropped first and last.
func (l *Ledger) keys(runID string) []string { return l.s.runKeys(runID) }

// group names the calls of tool with input in a key's field.
func group(tool, input string) string { return digest(tool + "\x00" + input) }

// Begin records the intent of the call e, or finds the earlier entry it
// continues (see run.Ledger), atomically, in one script, and keeps the run
// TTL from now. It returns an error wrapping ErrUnavailable when Redis is
// unavailable (the intent may have been recorded all the same: Begin again
// with the same Claim finds it as the caller's own), and one wrapping
// run.ErrCorrupt when an entry or a count of the run in Redis cannot be
// read.
func (l *Ledger) Begin(ctx context.Context, runID string, e run.Entry) (run.Begun, error) {
	if l.s == nil {
		return run.Begun{}, errNoLedgerStore
	}
	e.Pending = true
	body, err := encodeEntry(e)
	if err != nil {
		return run.Begun{}, err
	}
	var reply []any
	err = l.s.do(ctx, opBegin, l.keys(runID)[0], func(ctx context.Context) error {
		v, err := beginScript.Run(ctx, l.s.client, l.keys(runID), group(e.Tool, e.Input), e.N, flag(e.ReadOnly),
			flag(e.Alternative), body, e.Tool, e.Key, l.maxEntries(), l.ttl().Milliseconds(), e.Claim).Slice()
		reply = v
		return err
	})
	if err != nil {
		l.s.health.refused(stateLedger)
		return run.Begun{}, corrupted(err)
	}
	return decodeBegun(e, reply)
}

// Finish records how the call e ended, unless the machine of run.Ledger
// says not to, atomically, in one script. It returns an error wrapping
// ErrUnavailable when Redis is unavailable, and one wrapping
// run.ErrCorrupt when the entry in Redis cannot be read.
func (l *Ledger) Finish(ctx context.Context, runID string, e run.Entry) (run.Finished, error) {
	if l.s == nil {
		return run.Finished{}, errNoLedgerStore
	}
	body, err := encodeEntry(e)
	if err != nil {
		return run.Finished{}, err
	}
	var reply []any
	err = l.s.do(ctx, opFinish, l.keys(runID)[0], func(ctx context.Context) error {
		v, err := finishScript.Run(ctx, l.s.client, l.keys(runID), group(e.Tool, e.Input), e.N, e.Key,
			statusCode(e.Status()), body, flag(e.Final()), e.Tool, l.ttl().Milliseconds(), e.Claim, flag(e.ReadOnly)).Slice()
		reply = v
		return err
	})
	if err != nil {
		l.s.health.refused(stateLedger)
		return run.Finished{}, corrupted(err)
	}
	return decodeFinished(runID, reply)
}

// corrupted wraps err with run.ErrCorrupt when it says that the run's data
// in Redis cannot be read: a ledger script found an entry it cannot read,
// or Redis refused a command for the data it found (a key of another
// type, a count that is not a number), which no retry mends. Other errors
// are returned as they are.
func corrupted(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	var rf *refusal
	if !errors.As(err, &rf) || rf.reply == nil {
		return err
	}
	msg := rf.reply.Error()
	for _, p := range []string{"CORRUPT", "WRONGTYPE"} {
		if strings.HasPrefix(msg, p) {
			return fmt.Errorf("%w: %w", run.ErrCorrupt, err)
		}
	}
	if strings.HasPrefix(msg, "ERR") && (strings.Contains(msg, "not an integer") || strings.Contains(msg, "user_script") ||
		strings.Contains(msg, "Error running script")) {
		return fmt.Errorf("%w: %w", run.ErrCorrupt, err)
	}
	return err
}

// Holds reports whether Redis keeps the run runID. It returns an error
// wrapping ErrUnavailable when Redis is unavailable.
func (l *Ledger) Holds(ctx context.Context, runID string) (bool, error) {
	if l.s == nil {
		return false, errNoLedgerStore
	}
	var n int64
	err := l.s.do(ctx, opHolds, l.keys(runID)[0], func(ctx context.Context) error {
		v, err := l.s.client.Exists(ctx, l.keys(runID)[0]).Result()
		n = v
		return err
	})
	if err != nil {
		l.s.health.refused(stateLedger)
	}
	return n > 0, err
}

// Entries returns the run's entries, oldest first (none for a run Redis
// does not keep), for inspection: toolsafe's layers never read a whole
// run. It returns an error wrapping ErrUnavailable when Redis is
// unavailable, and one wrapping run.ErrCorrupt when an entry in Redis is
// not valid.
func (l *Ledger) Entries(ctx context.Context, runID string) ([]run.Entry, error) {
	if l.s == nil {
		return nil, errNoLedgerStore
	}
	ks := l.keys(runID)
	var members []redis.Z
	var fields []any
	err := l.s.do(ctx, opEntries, ks[0], func(ctx context.Context) error {
		members = nil // sent again after a reply that it did not run
		for _, k := range ks[1:] {
			zs, err := l.s.client.ZRangeWithScores(ctx, k, 0, -1).Result()
			if err != nil {
				return err
			}
			members = append(members, zs...)
		}
		if len(members) == 0 {
			return nil
		}
		slices.SortFunc(members, func(a, b redis.Z) int { return int(a.Score - b.Score) })
		names := make([]string, 0, 2*len(members))
		for _, z := range members {
			names = append(names, "s:"+z.Member.(string), "r:"+z.Member.(string))
		}
		v, err := l.s.client.HMGet(ctx, ks[0], names...).Result()
		fields = v
		return err
	})
	if err != nil {
		l.s.health.refused(stateLedger)
		return nil, err
	}
	return decodeEntries(runID, members, fields)
}

// decodeEntries decodes the states and bodies of members, in order.
func decodeEntries(runID string, members []redis.Z, fields []any) ([]run.Entry, error) {
	var out []run.Entry
	for i, z := range members {
		st, _ := fields[2*i].(string)
		body, _ := fields[2*i+1].(string)
		if st == "" {
			continue
		}
		e, err := decodeEntry(body)
		m := z.Member.(string)
		pos, perr := strconv.Atoi(m[strings.LastIndexByte(m, ':')+1:])
		if err != nil || perr != nil {
			return nil, fmt.Errorf("%w: redisstore: entry %s of run %s in Redis is not valid", run.ErrCorrupt, m, runID)
		}
		e.N, e.Pending = pos, st[0] == 'i'
		out = append(out, e)
	}
	return out, nil
}

var errNoLedgerStore = fmt.Errorf("redisstore: this Ledger was not made by Store.Ledger")

// storedEntry is an Entry as the ledger keeps it in Redis: its tool, input
// and output as bytes (base64 in the JSON), so that text that is not valid
// UTF-8, which JSON strings cannot carry, comes back byte for byte and a
// resumed run matches it.
type storedEntry struct {
	run.Entry
	Tool, Input, Output []byte
}

// encodeEntry is e as the ledger keeps it, without its Claim: a pending
// entry's claim is kept in a field of its own (o:G:P), which the scripts
// change when another call takes the entry over.
func encodeEntry(e run.Entry) (string, error) {
	e.Claim = ""
	data, err := json.Marshal(storedEntry{Entry: e, Tool: []byte(e.Tool), Input: []byte(e.Input), Output: []byte(e.Output)})
	if err != nil {
		return "", fmt.Errorf("redisstore: %w", err)
	}
	return string(data), nil
}

func decodeEntry(body string) (run.Entry, error) {
	var se storedEntry
	if err := json.Unmarshal([]byte(body), &se); err != nil {
		return run.Entry{}, err
	}
	e := se.Entry
	e.Tool, e.Input, e.Output = string(se.Tool), string(se.Input), string(se.Output)
	return e, nil
}

// decodeBegun reads the begin script's reply for the call e: {status
// code, position, the entry found or false, new, total, tool, identical,
// identical failed, final}. A reply it cannot read is an error wrapping
// run.ErrCorrupt.
func decodeBegun(e run.Entry, reply []any) (run.Begun, error) {
	bad := fmt.Errorf("%w: redisstore: the ledger's begin script answered %v", run.ErrCorrupt, reply)
	if len(reply) != 9 {
		return run.Begun{}, bad
	}
	ints := make([]int, 0, 6)
	for _, v := range reply[3:] {
		n, ok := v.(int64)
		if !ok {
			return run.Begun{}, bad
		}
		ints = append(ints, int(n))
	}
	code, _ := reply[0].(string)
	pos, ok := reply[1].(int64)
	body, found := reply[2].(string)
	if !ok || (code == "new") == found {
		return run.Begun{}, bad
	}
	claim := e.Claim
	if found {
		taken, err := decodeEntry(body)
		if err != nil {
			return run.Begun{}, fmt.Errorf("%w: redisstore: an entry in Redis is not valid: %w", run.ErrCorrupt, err)
		}
		e = taken
	}
	e.N, e.Pending, e.Claim = int(pos), code == "i" || code == "o" || code == "new", claim
	b := run.Begun{Entry: e, New: ints[0] == 1}
	if b.New {
		b.Counts = run.Counts{Total: ints[1], Tool: ints[2], Identical: ints[3], IdenticalFailed: ints[4], Final: ints[5] == 1}
	}
	return b, nil
}

// decodeFinished reads the finish script's reply: {written, the answer
// that stands instead or false}.
func decodeFinished(runID string, reply []any) (run.Finished, error) {
	written, ok := reply2(reply)
	if !ok {
		return run.Finished{}, fmt.Errorf("%w: redisstore: the ledger's finish script answered %v", run.ErrCorrupt, reply)
	}
	f := run.Finished{Written: written == 1}
	if body, ok := reply[1].(string); ok {
		a, err := decodeEntry(body)
		if err != nil {
			return run.Finished{}, fmt.Errorf("%w: redisstore: an answered entry of run %s in Redis is not valid: %w", run.ErrCorrupt, runID, err)
		}
		a.Pending = false
		f.Answer = &a
	}
	return f, nil
}

// reply2 reads the first of a two-element reply as an integer.
func reply2(reply []any) (int64, bool) {
	if len(reply) != 2 {
		return 0, false
	}
	n, ok := reply[0].(int64)
	return n, ok
}

// statusCode is how the ledger's scripts name a status.
func statusCode(s run.Status) string {
	return [...]string{run.StatusPending: "i", run.StatusOpen: "o", run.StatusAnswered: "d",
		run.StatusUnknown: "u", run.StatusFailed: "f", run.StatusRefused: "l"}[s]
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
