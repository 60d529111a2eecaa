// Package redistest gives redisstore's tests and its fleet benchmark a
// real Redis: the one REDIS_ADDR names, or a redis-server process of their
// own that they can kill, pause and restart. Nothing is simulated.
package redistest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/redisstore"
)

// HowToStart says how to get a Redis for the tests.
const HowToStart = `redisstore's tests need a real Redis, or a real Redis Cluster. Start one and name it in REDIS_ADDR:

    apt-get install -y redis-server && redis-server --port 6390 --bind 127.0.0.1 --save '' &
    REDIS_ADDR=127.0.0.1:6390 go test -race ./...

or, for a cluster of 3 masters with a replica each (several addresses, comma-separated):

    REDIS_ADDR=$(bash scripts/redis-cluster.sh start /tmp/toolsafe-cluster) go test -race ./...

(.ci/run does both for you.)`

// Addr returns the address in REDIS_ADDR after checking that a Redis
// answers there (every master of it, for several addresses: a cluster's);
// otherwise an error that says how to start one.
func Addr() (string, error) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		return "", errors.New("REDIS_ADDR is not set.\n" + HowToStart)
	}
	c := NewClient(addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.Ping(ctx).Err()
	if cc, ok := c.(*redis.ClusterClient); ok && err == nil {
		err = cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() })
	}
	if err != nil {
		return "", fmt.Errorf("no Redis answers at REDIS_ADDR=%s (%v).\n%s", addr, err, HowToStart)
	}
	return addr, nil
}

// NewClient returns a client of the Redis at addrs, as a program of
// redisstore would make it: one address (host:port) is one Redis
// (redisstore.ClientOptions); several, comma-separated, are nodes of a
// Redis Cluster (redisstore.ClusterOptions).
func NewClient(addrs string) redis.UniversalClient {
	list := Addrs(addrs)
	if len(list) == 1 {
		return redis.NewClient(redisstore.ClientOptions(list[0]))
	}
	return redis.NewClusterClient(redisstore.ClusterOptions(list...))
}

// Addrs splits comma-separated addresses.
func Addrs(addrs string) []string {
	var out []string
	for _, a := range strings.Split(addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Prefix returns a key prefix no other test uses.
func Prefix(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	return "test-" + clean + "-" + hex.EncodeToString(b[:])
}

// Keys returns the keys of prefix ("{PREFIX:..." and, from older
// versions, "PREFIX:...") with their TTLs (-1: none), on every master of a
// cluster.
func Keys(ctx context.Context, c redis.UniversalClient, prefix string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	var mu sync.Mutex
	scan := func(ctx context.Context, node redis.UniversalClient) error {
		for _, match := range []string{"{" + prefix + ":*", prefix + ":*"} { // tagged keys, and those of older versions
			iter := node.Scan(ctx, 0, match, 1000).Iterator()
			for iter.Next(ctx) {
				k := iter.Val()
				ttl, err := node.PTTL(ctx, k).Result()
				if err != nil {
					return err
				}
				mu.Lock()
				out[k] = ttl
				mu.Unlock()
			}
			if err := iter.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return out, cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return scan(ctx, n) })
	}
	return out, scan(ctx, c)
}

// CheckTTLs fails t when a key under prefix has no TTL, and deletes them
// all.
func CheckTTLs(t testing.TB, c redis.UniversalClient, prefix string) {
	t.Helper()
	ctx := context.Background()
	keys, err := Keys(ctx, c, prefix)
	if err != nil {
		t.Errorf("listing the keys under %s: %v", prefix, err)
		return
	}
	for k, ttl := range keys {
		if ttl < 0 {
			t.Errorf("key %s has no TTL", k)
		}
		c.Del(ctx, k)
	}
}

// Server is a redis-server process of the caller's own, on 127.0.0.1 on a
// free port, with no persistence unless started by StartDurable.
type Server struct {
	port  int
	log   io.Writer
	dir   string   // the append-only file's directory, "" for none
	extra []string // more of its configuration (a cluster node's)

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start starts a redis-server on a free port of 127.0.0.1 and returns when
// it accepts connections. It needs redis-server in PATH; the error says how
// to install it. log, if not nil, gets the server's output.
func Start(log io.Writer) (*Server, error) { return start(log, "") }

// StartDurable is Start with the persistence the ledger and grants need to
// survive a restart: the append-only file on, written to dir and synced to
// disk before each command is answered (appendfsync always), no eviction.
// Restart starts it again on the same file: nothing acknowledged is lost,
// even after Kill.
func StartDurable(log io.Writer, dir string) (*Server, error) { return start(log, dir) }

func start(log io.Writer, dir string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("redis-server is not installed: apt-get install -y redis-server")
	}
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{port: port, log: log, dir: dir}
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server and waits for its "Ready to accept connections".
func (s *Server) start() error {
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""}
	if s.dir != "" {
		args = append(args, DurableConfig...)
		args = append(args, "--dir", s.dir)
	}
	args = append(args, s.extra...)
	cmd := exec.Command("redis-server", args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			if s.log != nil {
				fmt.Fprintln(s.log, line)
			}
			if !signalled && strings.Contains(line, "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-ready:
	case <-done:
		return fmt.Errorf("redis-server on port %d exited before it was ready", s.port)
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("redis-server on port %d was not ready within 10s", s.port)
	}
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return nil
}

// Addr is the server's address, "127.0.0.1:PORT"; it stays the same across
// Restart.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Running reports whether the server runs: started, and not killed since.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit. Its data is gone.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused server dies too
	_ = cmd.Process.Kill()
	<-done
}

// DurableConfig is the redis-server configuration under which the ledger
// and grants survive a restart, as the package doc of redisstore names it.
var DurableConfig = []string{"--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction"}

// Restart starts the server again on the same port after Kill: empty, or
// with what its append-only file holds when started by StartDurable.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	for range 20 { // the port may linger a moment after a kill
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Pause stops the server (SIGSTOP): it keeps its connections and answers
// nothing, as a Redis that is slow beyond any timeout. Resume continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Close kills the server.
func (s *Server) Close() { s.Kill() }
