package otelhook_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// A tool that fails twice with a transient error, then answers: one call
// span, an attempt span per attempt, a retry event per wait.
func ExampleNew() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	calls := 0
	fetch := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		calls++
		if calls <= 2 {
			return "", middleware.Transient(errors.New("billing API busy"))
		}
		return `{"number":"INV-1001","status":"paid"}`, nil
	})
	invoice := toolsafe.Wrap(fetch,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
			Base: 10 * time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))),
	)
	invoice.Run(context.Background(), `{"number":"INV-1001"}`)

	// Spans end inner first: the attempts, then the call.
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), show(s.Attributes(), otelhook.AttemptKey, "error.type", otelhook.AttemptsKey, otelhook.SummaryKey))
		for _, e := range s.Events() {
			fmt.Println("  event", e.Name, show(e.Attributes, otelhook.AttemptKey, otelhook.DelayKey))
		}
	}
	// Output:
	// attempt 1 [toolsafe.attempt=1 error.type=tool-failed]
	// attempt 2 [toolsafe.attempt=2 error.type=tool-failed]
	// attempt 3 [toolsafe.attempt=3]
	// execute_tool fetch_invoice [toolsafe.attempts=3 toolsafe.summary=ok after 3 attempts]
	//   event retry [toolsafe.attempt=1 toolsafe.delay_s=0.01]
	//   event retry [toolsafe.attempt=2 toolsafe.delay_s=0.02]
}

// A tool that never recovers, wrapped with toolsafe.WithTracing: the call
// span carries the Kind and the
// message the model got, each attempt its own span.
func ExampleNew_neverRecovers() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	down := middleware.Func("fetch_invoice", "Fetches one invoice.", func(context.Context, string) (string, error) {
		return "", middleware.Transient(errors.New("billing API busy"))
	})
	invoice := toolsafe.Wrap(down,
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{
			Base: time.Millisecond, Multiplier: 2, Rand: func() float64 { return 0 }}}),
		toolsafe.WithTracing(otelhook.New(otelhook.WithTracerProvider(tp))),
	)
	invoice.Run(context.Background(), `{"number":"INV-1001"}`)

	for _, s := range spans.Ended() {
		fmt.Printf("%s: %s %v\n", s.Name(), s.Status().Code, show(s.Attributes(), "error.type", otelhook.AttemptsKey))
	}
	// Output:
	// attempt 1: Error [error.type=tool-failed]
	// attempt 2: Error [error.type=tool-failed]
	// attempt 3: Error [error.type=tool-failed]
	// execute_tool fetch_invoice: Error [error.type=tool-failed toolsafe.attempts=3]
}

// show lists the values of keys found in kvs, in the order of keys.
func show(kvs []attribute.KeyValue, keys ...attribute.Key) []string {
	var out []string
	for _, k := range keys {
		for _, kv := range kvs {
			if kv.Key == k {
				out = append(out, string(k)+"="+kv.Value.String())
			}
		}
	}
	return out
}
