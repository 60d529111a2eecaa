package policy_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/policy"
)

func TestBackoffDelay(t *testing.T) {
	zero := func() float64 { return 0 }
	top := func() float64 { return 0.96 }
	half := func() float64 { return 0.5 }
	tests := []struct {
		name string
		b    policy.Backoff
		n    int
		want time.Duration
	}{
		{"the reference backoff waits 500ms after attempt 1", policy.Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25, Rand: zero}, 1, 500 * time.Millisecond},
		{"then 1s after attempt 2", policy.Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25, Rand: zero}, 2, time.Second},
		{"then 2s after attempt 3", policy.Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25, Rand: zero}, 3, 2 * time.Second},
		{"Max caps before jitter", policy.Backoff{Base: time.Second, Max: 4 * time.Second, Multiplier: 2, Rand: zero}, 10, 4 * time.Second},
		{"so a wait can reach Max × (1 + Jitter)", policy.Backoff{Base: time.Second, Max: 30 * time.Second, Multiplier: 2, Jitter: 0.25, Rand: half}, 20, 33750 * time.Millisecond},
		{"jitter only lengthens", policy.Backoff{Base: time.Second, Multiplier: 2, Jitter: 0.25, Rand: top}, 1, 1240 * time.Millisecond},
		{"multiplier 0 means constant", policy.Backoff{Base: time.Second, Rand: zero}, 5, time.Second},
		{"multiplier 1.5", policy.Backoff{Base: time.Second, Multiplier: 1.5, Rand: zero}, 3, 2250 * time.Millisecond},
		{"the zero Backoff waits nothing", policy.Backoff{}, 3, 0},
		{"n below 1 counts as 1", policy.Backoff{Base: time.Second, Multiplier: 2, Rand: zero}, 0, time.Second},
		{"no Max saturates instead of overflowing", policy.Backoff{Base: time.Hour, Multiplier: 10, Rand: zero}, 100, time.Duration(math.MaxInt64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.b.Delay(tt.n); got != tt.want {
				t.Errorf("Delay(%d) = %v; want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestDefaultBackoffStaysInItsRange(t *testing.T) {
	b := policy.DefaultBackoff() // Rand nil: math/rand/v2
	for n, lo := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		for range 100 {
			d := b.Delay(n + 1)
			if d < lo || d > lo+lo/4 {
				t.Fatalf("Delay(%d) = %v; want in [%v, %v]", n+1, d, lo, lo+lo/4)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		r    policy.Retry
		want string // "" for valid
	}{
		{"the zero Retry is valid", policy.Retry{}, ""},
		{"the default backoff is valid", policy.Retry{MaxRetries: 3, Backoff: policy.DefaultBackoff()}, ""},
		{"negative retries", policy.Retry{MaxRetries: -1}, "max retries -1 is negative"},
		{"negative max duration", policy.Retry{MaxDuration: -time.Second}, "max duration -1s is negative"},
		{"negative base", policy.Retry{Backoff: policy.Backoff{Base: -time.Second}}, "backoff base -1s is negative"},
		{"negative max", policy.Retry{Backoff: policy.Backoff{Max: -time.Second}}, "backoff max -1s is negative"},
		{"negative multiplier", policy.Retry{Backoff: policy.Backoff{Multiplier: -2}}, "backoff multiplier -2 is negative"},
		{"jitter above 1", policy.Retry{Backoff: policy.Backoff{Jitter: 1.5}}, "backoff jitter 1.5 is outside [0, 1]"},
		{"jitter below 0", policy.Retry{Backoff: policy.Backoff{Jitter: -0.1}}, "backoff jitter -0.1 is outside [0, 1]"},
		{"jitter NaN", policy.Retry{Backoff: policy.Backoff{Jitter: math.NaN()}}, "outside [0, 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
