package main

import (
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/redisstore"
)

// newClient returns a client of the Redis at addrs: one address is one
// Redis; several, comma-separated, are nodes of a Redis Cluster (some or
// all of them).
func newClient(addrs string) redis.UniversalClient {
	var list []string
	for _, a := range strings.Split(addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			list = append(list, a)
		}
	}
	if len(list) > 1 {
		return redis.NewClusterClient(redisstore.ClusterOptions(list...))
	}
	return redis.NewClient(redisstore.ClientOptions(addrs))
}
