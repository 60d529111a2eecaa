package main

import (
	"context"
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

// clusterNode reports whether the Redis c talks to is a node of a Redis
// Cluster (INFO cluster says cluster_enabled:1). A client of one node
// reaches only that node's keys, so one address of a cluster is taken as
// the cluster's (ClusterOptions takes some of its nodes' addresses).
// An error, or a Redis that does not say, counts as no cluster.
func clusterNode(ctx context.Context, c redis.UniversalClient) bool {
	if _, one := c.(*redis.Client); !one {
		return false
	}
	info, err := c.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}
