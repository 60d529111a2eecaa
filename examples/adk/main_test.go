package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// The demo is the main job: it must keep showing what the README promises.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("GOOGLE_API_KEY", "")
	var out strings.Builder
	if err := demo(context.Background(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"[1] fetch_invoice (call call-1)", "status: ok   attempts: 3",
		"status: error (tool-error)   attempts: 1", `"1002" is not an invoice number`,
		"status: error (tool-failed)   attempts: 4", "do not call fetch_invoice again",
		"[5] refund (call call-5)", "status: paused (approval-required)",
		"run 1 paused: ADK asks the user to confirm refund",
		"[6] refund (call call-5)", `"status":"applied"`,
		"refunds applied by the upstream: 1",
		"execute_tool fetch_invoice", "ok after 3 attempts  [call-1]", "attempt 3",
		"final answer: INV-1001 (Acme Corp",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "execute_tool fetch_invoice "); n != 4 {
		t.Errorf("%d fetch_invoice call spans; want one per call, 4:\n%s", n, got)
	}
	if strings.Contains(got, "reset by peer") {
		t.Errorf("a raw error reached the output:\n%s", got)
	}
}
