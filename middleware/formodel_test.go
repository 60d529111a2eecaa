package middleware

import (
	"testing"
	"time"
)

// The model reads durations as a person would say them.
func TestForModel(t *testing.T) {
	for d, want := range map[time.Duration]string{
		500 * time.Microsecond: "under 1ms", 750 * time.Millisecond: "750ms", 2540 * time.Millisecond: "2.5s",
		45 * time.Second: "45s", 200 * time.Second: "3m20s", 24 * time.Hour: "24h", 135*time.Minute + 10*time.Second: "2h15m",
		72 * time.Hour: "3 days", time.Duration(1<<63 - 1): "106752 days",
	} {
		if got := forModel(d); got != want {
			t.Errorf("forModel(%v) = %q; want %q", d, got, want)
		}
	}
}
