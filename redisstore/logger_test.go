package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/redisstore"
)

// go-redis's own lines, such as its dial failures during an outage, go to
// the logger given, at the level given, and to nothing above it.
func TestGoRedisLinesGoToTheLoggerAtItsLevel(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	lg := redisstore.Logger(l, slog.LevelDebug)
	lg.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v", 5, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	out := buf.String()
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "go-redis: connection pool: failed to dial after 5 attempts") || !strings.Contains(out, "component=go-redis") {
		t.Errorf("logged %q; want the line at DEBUG, component go-redis", out)
	}

	buf.Reset()
	quiet := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	redisstore.Logger(quiet, slog.LevelDebug).Printf(context.Background(), "redis: connection pool: failed to dial")
	if buf.Len() != 0 {
		t.Errorf("logged %q at INFO; want nothing", buf.String())
	}
}
