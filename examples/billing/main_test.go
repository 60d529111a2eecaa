package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/examples/internal/transcript"
)

// The demo is the main job: it must keep showing what the README promises.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("OPENAI_API_KEY", "")
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"[1] fetch_invoice", "status: ok   attempts: 4",
		"[2] fetch_invoice", "status: error (tool-error)   attempts: 1", `"1002" is not an invoice number`,
		"[3] fetch_invoice", "Globex",
		"[4] fetch_invoice", "status: error (tool-failed)   attempts: 4", "do not call fetch_invoice again",
		"final answer: INV-1001 (Acme Corp",
		"upstream requests: 9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
	// What the README shows of it, its status lines and its span tree.
	blocks, err := transcript.READMEBlocks("../../README.md", "go run ./examples/billing")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := transcript.MatchREADME(b, got); err != nil {
			t.Errorf("%v\nthe demo printed:\n%s", err, got)
		}
	}
	if strings.Contains(got, "reset by peer") {
		t.Errorf("a raw error reached the output:\n%s", got)
	}
}
