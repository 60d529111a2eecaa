package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/redisstore"
	"github.com/toolsafe/toolsafe/redisstore/internal/redistest"
)

// redisAddr is the Redis of the tests (REDIS_ADDR).
var redisAddr string

func TestMain(m *testing.M) {
	if role := os.Getenv(replicaRoleEnv); role != "" {
		os.Exit(replicaMain(role)) // a replica process of TestResumeOnAnotherReplica
	}
	addr, err := redistest.Addr()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	redisAddr = addr
	// go-redis probes a node it could not dial in the background, sleeping
	// a second between probes before it sees its pool closed: a client of a
	// cluster whose killed master stays dead leaves one for up to a second.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// newClient returns a client of addr (several, comma-separated, for a
// cluster), closed when t ends.
func newClient(t testing.TB, addr string) redis.UniversalClient {
	t.Helper()
	c := redistest.NewClient(addr)
	t.Cleanup(func() { c.Close() })
	return c
}

// replica is one process's view of the fleet: its own client and Store.
type replica struct {
	prefix string
	client redis.UniversalClient
	store  *redisstore.Store
	logs   *logBuffer
}

// newReplicas returns n Stores with independent clients on addr, sharing
// one key prefix, as n replicas of a fleet. When t ends every key under
// the prefix must have a TTL, and is deleted.
func newReplicas(t testing.TB, addr string, n int, opts ...redisstore.Option) []*replica {
	t.Helper()
	prefix := redistest.Prefix(t.Name())
	rs := make([]*replica, n)
	for i := range rs {
		logs := &logBuffer{}
		c := newClient(t, addr)
		defaults := []redisstore.Option{redisstore.WithPrefix(prefix)}
		if addr == redisAddr {
			// The shared server is up: a test on it is about the fleet's
			// state, not about a slow Redis, so a machine busy enough to
			// take longer than the Store's 50ms must not turn it into an
			// outage (and the replicas into local breakers). A test's own
			// WithTimeout, after these, wins.
			defaults = append(defaults, redisstore.WithTimeout(5*time.Second))
		}
		s, err := redisstore.New(c, append(append(defaults,
			redisstore.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))),
			opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		rs[i] = &replica{prefix: prefix, client: c, store: s, logs: logs}
	}
	check := newClient(t, addr)
	t.Cleanup(func() { redistest.CheckTTLs(t, check, prefix) })
	return rs
}

// ownServer starts a redis-server of the test's own, killed when t ends.
func ownServer(t testing.TB) *redistest.Server {
	t.Helper()
	srv, err := redistest.Start(nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, redistest.HowToStart)
	}
	t.Cleanup(srv.Close)
	return srv
}

// logBuffer collects a Store's log lines, and tells waiters of each.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.buf.Write(p)
}

// waitFor waits until a line logged at level holds text, and fails t
// after 10s.
func (l *logBuffer) waitFor(t testing.TB, level, text string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		found := strings.Contains(l.buf.String(), "level="+level+" ") && slices.ContainsFunc(l.linesLocked(level), func(s string) bool { return strings.Contains(s, text) })
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("nothing logged at %s with %q within 10s; logged:\n%s", level, text, l.String())
		}
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the lines logged at level ("WARN", "INFO", ...).
func (l *logBuffer) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.linesLocked(level)
}

func (l *logBuffer) linesLocked(level string) []string {
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, "level="+level+" ") {
			out = append(out, line)
		}
	}
	return out
}

var background = context.Background()
