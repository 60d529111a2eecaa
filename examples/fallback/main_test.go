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
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`[1] lookup_ticket {"id":"PAY-88"}`, "routed to the fallback: search_tickets, because lookup_ticket failed (tool-error: ticket PAY-88 was not found) after 1 attempt\n",
		"(lookup_ticket could not answer, so its fallback tool search_tickets did;",
		`-> as the fallback: search_tickets {"query":"PAY-88"}`, "T-1042",
		`[2] search_tickets {"query":"VPN"}`, "status: ok   attempts: 3", "routed to the fallback: search_archive, because search_tickets failed (tool-failed: HTTP 503 Service Unavailable) after 3 attempts\n",
		"-> as the fallback: search_archive", "T-0007",
		"final answer: Your refund (PAY-88) is ticket T-1042",
		"upstream requests: lookup 1, search 4, archive 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
}
