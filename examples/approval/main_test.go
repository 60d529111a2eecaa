package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The demo must keep showing what its doc comment promises.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	if err := demo(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"run 1 paused: refund", "attempt 1): no approval has been granted for this input",
		"run 2 paused: refund", "attempt 2): attempt 2 of a destructive action needs its own approval; the previous attempt may have been applied",
		`"refund":"R-1","status":"applied"`,
		"run 3 paused: refund {\"order\":\"A-1002\"",
		"status: error (approval-denied)", "The user denied approval for refund.",
		"replayed: the run ledger answered",
		"final answer: Order A-1001 was refunded 25 EUR.",
		"refund requests received upstream: 2",
		"refunds applied by the upstream: 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
}
