package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Logger returns a logger for go-redis (redis.SetLogger) that writes its
// lines to l at level, with the attribute component=go-redis, instead of
// to the standard logger: during an outage go-redis logs "connection pool:
// failed to dial" about twice a second per client, beside the Store's one
// WARN. go-redis has one logger for the whole process, so set it once, at
// start. Its lines hold raw error text (addresses, the server's words):
// give level slog.LevelDebug, as toolsafe keeps such text out of INFO. A
// nil l means slog.Default() when a line is logged. Safe for concurrent use.
func Logger(l *slog.Logger, level slog.Level) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return redisLogger{l: l, level: level}
}

type redisLogger struct {
	l     *slog.Logger
	level slog.Level
}

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l := r.l
	if l == nil {
		l = slog.Default()
	}
	if !l.Enabled(ctx, r.level) {
		return
	}
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	l.Log(ctx, r.level, "go-redis: "+msg, "component", "go-redis")
}
