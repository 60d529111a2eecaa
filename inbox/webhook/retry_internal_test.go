package webhook

import (
	"testing"
	"time"
)

func TestRetryAfterIsReadInSecondsOrAsADateAndCapped(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"2": 2 * time.Second, "Wed, 02 Dec 2026 12:00:05 GMT": 5 * time.Second,
		"3600": MaxRetryAfter, "": 0, "soon": 0, "-1": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}
