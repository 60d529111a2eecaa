package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/examples/internal/transcript"
)

// TestMain runs the test binary as the demo's worker process when the
// demo starts it as one (os/exec of os.Args[0]).
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "worker" {
		if err := workerMain(); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The demo must keep showing what its doc comment promises.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	if os.Getenv("TEMPORAL_CLI") == "" && os.Getenv(addressEnv) == "" {
		t.Fatal("TEMPORAL_CLI is not set: the demo starts a Temporal dev server with it. " +
			"bash scripts/e2e-temporal.sh -cli builds the CLI once, caches it, and prints its path; .ci/run does this for you.")
	}
	t.Setenv("OPENAI_API_KEY", "") // the scripted model, offline
	var out strings.Builder
	cfg := config{address: os.Getenv(addressEnv), decide: "self", inboxAddr: "127.0.0.1:0", worker: []string{os.Args[0]}}
	if err := demo(context.Background(), &out, cfg); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"fetch_invoice (call call_1)\n    status: ok   attempts: 2\n",
		"fetch_invoice (call call_2)\n    status: error (tool-error)   attempts: 1\n",
		`the model sees: "7" is not an invoice number`,
		"the inbox lists: refund {\"order\":\"A-1001\",\"amount_eur\":25}",
		"alice approved it through the inbox",
		"killing worker 1",
		"worker 2 started",
		"refund (call call_3)\n    status: ok   attempts: 2   approved by alice\n",
		`"refund":"R-1","status":"applied"`,
		"final answer: INV-1001 (Acme Corp, 1250.00 EUR) is paid.",
		"upstream: GET /invoices/INV-1001 2 requests; POST /refunds 2 requests with 1 idempotency key(s); refunds applied: 1\n",
		"audit: alice approved refund {\"order\":\"A-1001\",\"amount_eur\":25}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
	// What the README shows of it.
	blocks, err := transcript.READMEBlocks("../../README.md", "go run -C examples/temporal .")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := transcript.MatchREADME(b, got); err != nil {
			t.Errorf("%v\nthe demo printed:\n%s", err, got)
		}
	}
	if regexp.MustCompile(`reset by peer|connection reset`).MatchString(got) {
		t.Errorf("an upstream's raw text reached the output:\n%s", got)
	}
}
