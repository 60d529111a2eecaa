package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/examples/internal/transcript"
)

// The demo must keep showing what its doc comment promises.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("OPENAI_API_KEY", "") // the scripted model, offline
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	var out strings.Builder
	if err := demo(context.Background(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	got := out.String()
	// What the README shows of it.
	blocks, err := transcript.READMEBlocks("../../README.md", "go run -C examples/eino .")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := transcript.MatchREADME(b, got); err != nil {
			t.Errorf("%v\nthe example printed:\n%s", err, got)
		}
	}
	for _, want := range []string{
		"fetch_invoice (call call_1)\n    status: ok   attempts: 3",
		"fetch_invoice (call call_2)\n    status: error (tool-error)   attempts: 1",
		`"1002" is not an invoice number`,
		"refund (call call_4)\n    status: paused (approval-required)",
		"the run pauses: refund {\"order\":\"A-1001\",\"amount_eur\":25} needs approval (call call_4, attempt 1)",
		"refund (call call_4)\n    status: ok   attempts: 2",
		`"refund":"R-1","status":"applied"`,
		"final answer: INV-1001 (Acme Corp, 1250.00 EUR) is paid",
		"refunds applied by the upstream: 1",
		"execute_tool fetch_invoice", "[call_1]", "attempt 3",
		"invoke_agent billing (resumed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
}
