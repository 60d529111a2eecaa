package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// do runs f, the Redis commands of op on key (the first key they use, ""
// for none), with a context bounded by the Store's timeout (and ctx), and
// returns its error classified:
//
//   - nil, or redis.Nil: nil;
//   - ctx ended first: ctx's error (a caller giving up says nothing about
//     Redis);
//   - a reply that says the command did not run and may run in a moment
//     (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN, READONLY, BUSY, and
//     MOVED or ASK left after a cluster client's redirects), or on a
//     cluster client a connection that could not be made (the slot map is
//     loaded again: its master may have failed over): f runs again, after
//     1ms, 2ms, 4ms..., within the timeout; still so at its end, it is an
//     outage;
//   - MOVED or ASK on a client that is not a cluster's: the Store is
//     misrouted (see health.misroute), for good;
//   - another error reply (a script's error, a key of the wrong type): the
//     operation failed and Redis works; an error naming the reply's code;
//   - anything else (a timeout, a connection refused or reset): an outage
//     of key's shard begins (health.fail), and the error wraps
//     ErrUnavailable.
//
// When key's shard is down already, do does not call f and returns an
// error wrapping ErrUnavailable at once. No error it returns holds Redis's
// own text, which is logged at DEBUG.
func (s *Store) do(ctx context.Context, op operation, key string, f func(ctx context.Context) error) error {
	if s.health.misrouted.Load() {
		return fmt.Errorf("%w: %s refused: the Store's client is a client of one node of a Redis Cluster (make it with redisstore.ClusterOptions)", ErrUnavailable, op)
	}
	if !s.health.available(key) {
		return fmt.Errorf("%w (%s skipped until it answers again)", ErrUnavailable, op)
	}
	octx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	start := time.Now()
	var err error
	for wait := time.Millisecond; ; wait *= 2 {
		err = f(octx)
		if !s.notRun(err) {
			break
		}
		if s.cluster != nil && dialFailed(err) {
			s.cluster.ReloadState(octx) // its node may be dead, and its replica promoted
		}
		if !sleep(octx, wait) {
			break
		}
	}
	s.m.observe(op, time.Since(start))
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	code := replyCode(err)
	switch {
	case (code == "MOVED" || code == "ASK") && s.cluster == nil:
		s.health.misroute(op, err)
		return fmt.Errorf("%w: %s refused: the Store's client is a client of one node of a Redis Cluster (make it with redisstore.ClusterOptions)", ErrUnavailable, op)
	case code != "" && !s.notRun(err) && code != "OOM" && code != "NOSCRIPT":
		// Redis answered, with an error about this operation: the
		// operation failed, Redis did not.
		s.logger().Debug("redisstore: redis refused an operation", "prefix", s.cfg.prefix, "operation", string(op), "error", err.Error())
		var re redis.Error
		errors.As(err, &re)
		return &refusal{op: op, code: code, reply: re}
	}
	s.health.fail(op, key, err)
	return fmt.Errorf("%w: %s %s", ErrUnavailable, op, what(err, code))
}

// notRun reports whether err says the command did not run and may run in
// a moment: it is safe to send again. On a cluster client a connection
// that could not be made is one: its master may have died and its replica
// been promoted, which the slot map loaded again tells.
func (s *Store) notRun(err error) bool {
	if s.cluster != nil && dialFailed(err) {
		return true
	}
	switch replyCode(err) {
	case "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY", "BUSY":
		return true
	case "MOVED", "ASK":
		return s.cluster != nil // redirects left after a cluster client's own
	}
	return false
}

// refusal is the error of an operation that a Redis that works refused
// (a script's error, a key of the wrong type): its text names the
// operation and the reply's code; the reply is kept for the Store's own
// checks (corrupted), and logged at DEBUG, never shown.
type refusal struct {
	op    operation
	code  string
	reply redis.Error
}

func (r *refusal) Error() string {
	return fmt.Sprintf("redisstore: %s: redis refused it (%s; its reply is logged at DEBUG)", r.op, r.code)
}

// dialFailed reports whether err is a connection that could not be made:
// the command was never sent.
func dialFailed(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// replyCode returns the code of an error reply of Redis (its first word:
// "ERR", "WRONGTYPE", "TRYAGAIN"...), or "" when err is not one.
func replyCode(err error) string {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return ""
	}
	code, _, _ := strings.Cut(re.Error(), " ")
	return code
}

// what says what happened to an operation that failed for Redis, for an
// error's text: never Redis's own words.
func what(err error, code string) string {
	var ne net.Error
	switch {
	case code == "CLUSTERDOWN":
		return "failed: the cluster is down"
	case code != "":
		return "failed: redis answered " + code
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return "failed: redis could not be reached"
}

// sleep waits d, or until ctx ends (it reports false then).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// onceClient is the program's client, whose Lua scripts (EVAL, EVALSHA)
// are sent once: a cluster client sends a command whose connection failed
// again, and a script may have run before its answer was lost (a grant
// added twice, an intent taken for another call's). MOVED and ASK are
// still followed: a command redirected did not run.
type onceClient struct{ redis.UniversalClient }

// onceCmd is a command that go-redis does not send again.
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }

func (c onceClient) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return c.once(ctx, "eval", script, keys, args)
}

func (c onceClient) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return c.once(ctx, "evalsha", sha1, keys, args)
}

func (c onceClient) once(ctx context.Context, name, payload string, keys []string, args []any) *redis.Cmd {
	all := make([]any, 0, 3+len(keys)+len(args))
	all = append(all, name, payload, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	all = append(all, args...)
	cmd := redis.NewCmd(ctx, all...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	_ = c.Process(ctx, onceCmd{cmd})
	return cmd
}
