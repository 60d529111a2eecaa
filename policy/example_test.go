package policy_test

import (
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe/policy"
)

// With Rand fixed at 0 the waits are exact: Base × Multiplier^(n−1), capped
// at Max. A real Backoff leaves Rand nil and adds up to Jitter × the wait.
func ExampleBackoff_Delay() {
	b := policy.Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second, Multiplier: 2, Jitter: 0.25,
		Rand: func() float64 { return 0 }}
	for n := 1; n <= 6; n++ {
		fmt.Println(n, b.Delay(n))
	}
	// Output:
	// 1 500ms
	// 2 1s
	// 3 2s
	// 4 4s
	// 5 8s
	// 6 8s
}
