package toolsafe_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// A middleware given to With sees each call once, however many attempts
// the retry makes inside it, and the call's final error.
func ExampleWith() {
	attempts := 0
	flaky := middleware.Func("get_rate", "Reads an exchange rate.", func(context.Context, string) (string, error) {
		attempts++
		if attempts < 3 {
			return "", middleware.Transient(errors.New("connection reset by peer"))
		}
		return "1.08", nil
	})
	audit := func(next tools.Tool) tools.Tool {
		return middleware.Func(next.Name(), next.Description(), func(ctx context.Context, input string) (string, error) {
			out, err := next.Call(ctx, input)
			fmt.Printf("audit: %s(%s) = %q, err %v\n", next.Name(), input, out, err)
			return out, err
		})
	}
	tool := toolsafe.Wrap(flaky, toolsafe.With(audit),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Constant(time.Millisecond)}))
	r := tool.Run(context.Background(), "EUR/USD")
	fmt.Println(r.Status(), "after", r.Attempts, "attempts")
	// Output:
	// audit: get_rate(EUR/USD) = "1.08", err <nil>
	// ok after 3 attempts
}

// WithPolicies runs failsafe-go policies of your own on each attempt, inside
// the retry. When a rate limiter refuses, the call ends at once as
// tool-busy, and the model is told the tool was not called.
func ExampleWithPolicies() {
	search := middleware.Func("search", "Searches the index.", func(_ context.Context, q string) (string, error) {
		return "3 results for " + q, nil
	})
	limiter := ratelimiter.NewBursty[string](1, time.Minute) // one call a minute
	tool := toolsafe.Wrap(search, toolsafe.WithPolicies(limiter),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2}))
	fmt.Println(tool.Run(context.Background(), "vpn").Observation())
	r := tool.Run(context.Background(), "wifi")
	fmt.Println(r.Kind(), "after", r.Attempts, "attempts")
	fmt.Println(r.Observation())
	// Output:
	// 3 results for vpn
	// tool-busy after 0 attempts
	// search was not called: it was called too often (a rate limit). Wait before calling it again, or go on without it.
}
