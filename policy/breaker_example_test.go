package policy_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolsafe/toolsafe"
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
	tool := toolsafe.Wrap(fetch, toolsafe.WithCircuitBreaker(billing))
	for range 4 {
		r := tool.Run(context.Background(), "INV-1001")
		fmt.Println(r.Kind(), billing.State())
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
	tool := toolsafe.Wrap(
		middleware.Func("search", "searches", func(context.Context, string) (string, error) {
			err := answers[calls]
			calls++
			return "", err
		}), toolsafe.WithCircuitBreaker(search))
	for range 3 {
		_ = tool.Run(context.Background(), "q")
		fmt.Println(search.State())
	}
	// Output:
	// closed
	// closed
	// open
}

// What counts: a transient failure and an attempt timeout are the
// dependency failing; a tool-error (the dependency answered) and the
// caller's own cancellation count neither way. Every attempt asks for a
// permit after the approval gate and before the bulkhead. A half-open
// probe abandoned by its attempt timeout holds its permit until its tool
// really returns, so at most Probes run at the dependency at once. State
// changes are told to the call that caused them
// (its span event circuit_breaker.state_change), after the breaker's lock is released.
// Open, Close and HalfOpen may be called by hand; a canceled probe's permit
// given back just before may then let one extra probe through.
func ExampleCircuitBreaker() {
	billing := policy.NewCircuitBreaker("billing", policy.Breaker{FailureThreshold: 3, Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	answers := []func(context.Context) error{
		func(context.Context) error { return middleware.NewToolError("no such invoice") },
		func(context.Context) error { return middleware.Transient(errors.New("connection reset")) },
		func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, // hangs past its attempt timeout
		func(ctx context.Context) error { cancel(); return ctx.Err() },     // the caller gives up
		func(context.Context) error { return middleware.Transient(errors.New("connection reset")) },
	}
	calls := 0
	fetch := middleware.Func("fetch_invoice", "reads an invoice", func(ctx context.Context, _ string) (string, error) {
		err := answers[calls](ctx)
		calls++
		return "", err
	})
	tool := toolsafe.Wrap(fetch, toolsafe.WithCircuitBreaker(billing), toolsafe.WithTimeout(10*time.Millisecond))
	for i := range answers {
		callCtx := context.Background()
		if i == 3 {
			callCtx = ctx
		}
		r := tool.Run(callCtx, "INV-1001")
		fmt.Println(r.Kind(), "failures:", billing.Metrics().Failures(), billing.State())
	}
	// Output:
	// tool-error failures: 0 closed
	// tool-failed failures: 1 closed
	// tool-timeout failures: 2 closed
	// canceled failures: 2 closed
	// tool-failed failures: 3 open
}
