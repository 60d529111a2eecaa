package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterConfig is the configuration of every node of a Cluster, as
// scripts/redis-cluster.sh starts them: a dead master is failed over in
// about 4s (cluster-node-timeout 3000), and the masters that are up serve
// their slots meanwhile (cluster-require-full-coverage no).
var ClusterConfig = []string{"--cluster-enabled", "yes", "--cluster-node-timeout", "3000", "--cluster-require-full-coverage", "no"}

// Cluster is a Redis Cluster of the caller's own on 127.0.0.1: 3 masters
// with one replica each, 6 redis-server processes made a cluster by
// redis-cli --cluster create, as scripts/redis-cluster.sh makes the one of
// .ci/run. Its nodes can be killed and restarted: a killed master's replica
// is promoted, and the master restarted rejoins as a replica.
type Cluster struct {
	Nodes []*Server
	dir   string
}

// StartCluster starts a Cluster and returns when every node says
// cluster_state:ok and every master has a replica in sync. It needs
// redis-server and redis-cli in PATH. log, if not nil, gets the servers'
// output.
func StartCluster(log io.Writer) (*Cluster, error) {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s is not installed: apt-get install -y redis-server", bin)
		}
	}
	dir, err := os.MkdirTemp("", "toolsafe-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	fail := func(err error) (*Cluster, error) {
		c.Close()
		return nil, err
	}
	used := map[int]bool{}
	for range 6 {
		var s *Server
		for try := 0; ; try++ {
			port, err := clusterPort(used)
			if err != nil {
				return fail(err)
			}
			s = &Server{port: port, log: log, extra: append(append([]string{}, ClusterConfig...),
				"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, port), "--dir", dir)}
			if err = s.start(); err == nil {
				break
			} else if try == 4 {
				return fail(err)
			}
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	for _, s := range c.Nodes {
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out))
	}
	if err := c.WaitHealthy(60 * time.Second); err != nil {
		return fail(err)
	}
	return c, nil
}

// clusterPort returns a free port of 127.0.0.1 whose cluster bus port
// (+10000) is free too, neither of them a port or a bus port of a node
// chosen already (used holds both of each). Both are below the kernel's
// ephemeral ports (32768 up by default), which a client's connection may
// take between this check and the node's start.
func clusterPort(used map[int]bool) (int, error) {
	for range 200 {
		p := 10000 + rand.IntN(12000)
		if used[p] || used[p+10000] || !bindable(p) || !bindable(p+10000) {
			continue
		}
		used[p], used[p+10000] = true, true
		return p, nil
	}
	return 0, errors.New("no free port pair for a cluster node")
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Addrs returns the nodes' addresses, comma-separated, as REDIS_ADDR names
// a cluster.
func (c *Cluster) Addrs() string {
	var a []string
	for _, s := range c.Nodes {
		a = append(a, s.Addr())
	}
	return strings.Join(a, ",")
}

// Node is one line of CLUSTER NODES.
type Node struct {
	Addr     string
	Master   bool
	Failed   bool // flagged fail (or fail?) by the node asked
	Slots    []string
	MasterID string // a replica's master
	ID       string
}

// ClusterNodes returns the cluster as the node at addr sees it.
func (c *Cluster) ClusterNodes(ctx context.Context, addr string) ([]Node, error) {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cl.Close()
	raw, err := cl.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		flags := f[2]
		n := Node{ID: f[0], Addr: strings.Split(f[1], "@")[0], Master: strings.Contains(flags, "master"),
			Failed: strings.Contains(flags, "fail"), MasterID: f[3], Slots: f[8:]}
		out = append(out, n)
	}
	return out, nil
}

// Masters returns the addresses of the masters that serve slots, as the
// first live node sees them.
func (c *Cluster) Masters(ctx context.Context) ([]string, error) {
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		ns, err := c.ClusterNodes(ctx, s.Addr())
		if err != nil {
			continue
		}
		var out []string
		for _, n := range ns {
			if n.Master && !n.Failed && len(n.Slots) > 0 {
				out = append(out, n.Addr)
			}
		}
		return out, nil
	}
	return nil, errors.New("no node of the cluster answers")
}

// Node returns the node at addr.
func (c *Cluster) Node(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

// MasterOf returns the address of the master that serves key's slot, as
// the first live node sees it.
func (c *Cluster) MasterOf(ctx context.Context, key string) (string, error) {
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		cl.Close()
		if err != nil {
			continue
		}
		ns, err := c.ClusterNodes(ctx, s.Addr())
		if err != nil {
			continue
		}
		for _, n := range ns {
			if !n.Master || n.Failed {
				continue
			}
			for _, r := range n.Slots {
				lo, hi, _ := strings.Cut(r, "-")
				if hi == "" {
					hi = lo
				}
				l, err1 := strconv.ParseInt(lo, 10, 64)
				h, err2 := strconv.ParseInt(hi, 10, 64)
				if err1 == nil && err2 == nil && slot >= l && slot <= h {
					return n.Addr, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no live master serves the slot of %s", key)
}

// WaitPromoted waits until a live node sees the slots of the dead master
// at addr served by another master (its replica, promoted), and returns
// when it saw so first; it polls every 10ms, for at most within.
func (c *Cluster) WaitPromoted(addr string, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, s := range c.Nodes {
			if !s.Running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			ns, err := c.ClusterNodes(ctx, s.Addr())
			cancel()
			if err != nil {
				continue
			}
			for _, n := range ns {
				if n.Addr == addr && n.Master && len(n.Slots) == 0 {
					return time.Now(), nil // its slots went to its replica
				}
				if n.Addr == addr && !n.Master {
					return time.Now(), nil
				}
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("the replica of %s was not promoted within %v", addr, within)
}

// WaitHealthy waits until every running node says cluster_state:ok and
// knows 6 nodes, and every master with slots has a replica in sync.
func (c *Cluster) WaitHealthy(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		if last = c.healthy(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the cluster is not healthy after %v: %v", within, last)
}

func (c *Cluster) healthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	masters := 0
	for _, s := range c.Nodes {
		if !s.Running() {
			return fmt.Errorf("%s is not running", s.Addr())
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		info, err := cl.ClusterInfo(ctx).Result()
		repl, err2 := cl.Info(ctx, "replication").Result()
		cl.Close()
		if err = errors.Join(err, err2); err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6") {
			return fmt.Errorf("%s: %s", s.Addr(), firstLine(info))
		}
		switch {
		case strings.Contains(repl, "role:master"):
			if !strings.Contains(repl, "connected_slaves:1") {
				return fmt.Errorf("master %s has no replica", s.Addr())
			}
			masters++
		case !strings.Contains(repl, "master_link_status:up"):
			return fmt.Errorf("replica %s is not in sync", s.Addr())
		}
	}
	if masters != 3 {
		return fmt.Errorf("%d masters, want 3", masters)
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := bytes.Cut([]byte(s), []byte("\n"))
	return strings.TrimSpace(string(l))
}

// Close kills every node and removes their files.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Kill()
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}
