// Package cluster is the code around the README's "On a Redis Cluster".
package cluster

import (
	"github.com/redis/go-redis/v9"

	"github.com/toolsafe/toolsafe/redisstore"
)

func _() {
	// README snippet
	_, _ = store, err
}
