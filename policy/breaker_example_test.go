package policy_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe/internal/layer"

	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// One breaker per dependency, shared by its tools: after 2 transient
// failures in a row it opens, and the next call is refused without running.
// A tool-error is the dependency answering: it counts neither way.
func ExampleNewCircuitBreaker() {
	billing := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 2, Delay: time.Minute})
	answers := []error{middleware.Transient(errors.New("connection reset")), middleware.NewToolError("no such invoice"),
		middleware.Transient(errors.New("connection reset")), nil}
	calls := 0
	fetch := middleware.Func("fetch_invoice", "reads an invoice", func(context.Context, string) (string, error) {
		err := answers[calls]
		calls++
		return "", err
	})
	tool := middleware.Chain(billing.Middleware(), layer.AttemptTimeout(0))(fetch)
	for range 4 {
		_, err := tool.Call(context.Background(), "INV-1001")
		kind, _ := middleware.Classify(err)
		fmt.Println(kind, billing.State())
	}
	fmt.Println("the tool ran", calls, "times")
	// Output:
	// tool-failed closed
	// tool-error closed
	// tool-failed open
	// circuit-open open
	// the tool ran 3 times
}

// With a Window the threshold is a ratio: 2 failures among the last 4
// counted attempts open the breaker, even with a success between them.
func ExampleBreaker_window() {
	search := policy.NewCircuitBreaker("search", policy.Breaker{FailureThreshold: 2, Window: 4, Delay: time.Minute})
	answers := []error{middleware.Transient(errors.New("reset")), nil, middleware.Transient(errors.New("reset"))}
	calls := 0
	tool := middleware.Chain(search.Middleware(), layer.AttemptTimeout(0))(
		middleware.Func("search", "searches", func(context.Context, string) (string, error) {
			err := answers[calls]
			calls++
			return "", err
		}))
	for range 3 {
		_, _ = tool.Call(context.Background(), "q")
		fmt.Println(search.State())
	}
	// Output:
	// closed
	// closed
	// open
}
