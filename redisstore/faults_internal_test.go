package redisstore

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// reply is an error reply of Redis, as go-redis returns it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

var _ redis.Error = reply("")

// Which errors are sent again within the timeout, on a client of one Redis
// and on a cluster's, and what an error's text says of each: never
// Redis's own words.
func TestErrorsAreClassified(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	single, cluster := &Store{}, &Store{cluster: redis.NewClusterClient(&redis.ClusterOptions{})}
	t.Cleanup(func() { cluster.cluster.Close() })
	for _, c := range []struct {
		err                 error
		onSingle, onCluster bool
		says                string
	}{
		{reply("TRYAGAIN Multiple keys request during rehashing of slot"), true, true, "answered TRYAGAIN"},
		{reply("CLUSTERDOWN The cluster is down"), true, true, "the cluster is down"},
		{reply("LOADING Redis is loading the dataset in memory"), true, true, "answered LOADING"},
		{reply("READONLY You can't write against a read only replica."), true, true, "answered READONLY"},
		{reply("MOVED 3999 127.0.0.1:6381"), false, true, "answered MOVED"},
		{reply("ASK 3999 127.0.0.1:6381"), false, true, "answered ASK"},
		{reply("WRONGTYPE Operation against a key holding the wrong kind of value"), false, false, "answered WRONGTYPE"},
		{dial, false, true, "could not be reached"},
		{reset, false, false, "could not be reached"},
	} {
		if got := single.notRun(c.err); got != c.onSingle {
			t.Errorf("%v on one Redis: sent again %v, want %v", c.err, got, c.onSingle)
		}
		if got := cluster.notRun(c.err); got != c.onCluster {
			t.Errorf("%v on a cluster: sent again %v, want %v", c.err, got, c.onCluster)
		}
		says := what(c.err, replyCode(c.err))
		if !strings.Contains(says, c.says) || strings.Contains(says, "slot") || strings.Contains(says, "127.0.0.1") || strings.Contains(says, "refused") {
			t.Errorf("%v says %q; want %q, without Redis's words", c.err, says, c.says)
		}
	}
}
