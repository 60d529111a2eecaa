package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/examples/internal/transcript"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The example runs offline against its real MCP server, a subprocess over
// stdio and then over Streamable HTTP, and its transcript shows the side
// effects the annotations gave, the retries of the read-only tool, the
// model-facing tool-error, the check that sent nothing, the destructive
// tool paused for approval because of its annotation and run once, the 503
// retried after its Retry-After, and the span tree with the MCP
// attributes.
func TestExample(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, ""); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	t.Log("\n" + got)

	// What the README shows of it.
	blocks, err := transcript.READMEBlocks("../../README.md", "go run -C examples/mcp .")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := transcript.MatchREADME(b, got); err != nil {
			t.Errorf("%v\nthe example printed:\n%s", err, got)
		}
	}
	calls, rest, _ := strings.Cut(got, "\nThe server's log")
	serverLog, tree, _ := strings.Cut(rest, "\nThe span tree:")
	serverLog, httpLog, _ := strings.Cut(serverLog, "\nThe log of the server over Streamable HTTP:")
	for _, want := range []string{
		"forecast: side effects none (trusted hint); not gated",
		"delete_alert: side effects without-key (default); destructive (trusted hint): every attempt needs a person's approval",
		`the run paused: delete_alert {"id":"A-7"} needs approval (call call_delete)`,
		`waiting in the approvals inbox: delete_alert {"id":"A-7"}`,
		"status: paused (approval-required)   attempts: 0",
		"observation: Alert A-7 deleted.",
		"status: ok   attempts: 2   delays: [1s]",
		"observation: Tromsø, next 1 days",
		"Alert A-7 is deleted.",
		`"required":["city"]`, // the real parameter schema
		"status: ok   attempts: 3",
		"[image: image/png, ",
		"status: error (tool-error)   attempts: 1",
		"observation: No such city: Atlantis. Ask the user for a real city, such as Oslo or Bergen.",
		"status: error (args-invalid)   attempts: 0",
		`argument "days" must be at most 7`,
		"The final answers: Oslo: sunny",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("the transcript does not show %q", want)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`execute_tool forecast .* gen_ai.tool.call.id=call_oslo  toolsafe.attempts=3`),
		regexp.MustCompile(`· retry after attempt 1, delay \d+ms \(tool-failed\)`),
		regexp.MustCompile(`· retry after attempt 2, delay \d+ms \(tool-timeout\)`),
		regexp.MustCompile(`attempt 1 .* mcp.method.name=tools/call  mcp.protocol.version=\S+  rpc.response.status_code=-32603  error.type=-32603`), // the MCP conventions' error.type
		regexp.MustCompile(`attempt 1 .* error.type=tool_error  toolsafe.reason="its upstream's message, withheld \(\d+ bytes\)`),
		regexp.MustCompile(`attempt 2 .* error.type=tool-timeout`),
		regexp.MustCompile(`gen_ai.tool.call.id=call_atlantis  toolsafe.attempts=1  error.type=tool-error`),
		regexp.MustCompile(`gen_ai.tool.call.id=call_bergen  toolsafe.attempts=0  error.type=args-invalid`),
		regexp.MustCompile(`gen_ai.tool.call.id=call_delete  toolsafe.attempts=0\n\s+· approval_required`),
		regexp.MustCompile(`· retry after attempt 1, delay 1s \(tool-failed\)`),
		regexp.MustCompile(`attempt 1 .* mcp.session.id=\S+  error.type=503  toolsafe.reason="HTTP 503 Service Unavailable"`),
	} {
		if !want.MatchString(tree) {
			t.Errorf("the span tree does not match %s", want)
		}
	}
	// The server received Oslo three times and Atlantis once; Bergen's
	// invalid call never reached it.
	for _, want := range []string{"Oslo #1: JSON-RPC internal error", "Oslo #2: hanging", "Oslo #3: answered", "Atlantis #1: isError"} {
		if !strings.Contains(serverLog, "tools/call forecast "+want) {
			t.Errorf("the server's log does not say %q", want)
		}
	}
	if strings.Contains(serverLog, "#4") || strings.Contains(serverLog, "Atlantis #2") {
		t.Error("the server got more calls than the story has")
	}
	if strings.Contains(serverLog, "Bergen") {
		t.Error("the invalid call for Bergen reached the server")
	}
	if n := strings.Count(serverLog, "tools/call delete_alert A-7: deleted"); n != 1 {
		t.Errorf("the server deleted the alert %d times; want once, after the approval", n)
	}
	for _, want := range []string{"tools/call: 503 Service Unavailable, Retry-After: 1", "tools/call forecast Tromsø #1: answered"} {
		if !strings.Contains(httpLog, want) {
			t.Errorf("the HTTP server's log does not say %q", want)
		}
	}
	if strings.Contains(calls, "10.20.0.9") || strings.Contains(tree, "10.20.0.9") || strings.Contains(got, "overloaded: upstream pool") {
		t.Error("the 503's body reached an observation or a span")
	}
	// The server's raw error is in its log, and nowhere else.
	const raw = "10.20.0.7"
	if !strings.Contains(serverLog, raw) {
		t.Errorf("the server's log lacks its raw error; the test no longer shows it is kept from the model")
	}
	if strings.Contains(calls, raw) || strings.Contains(tree, raw) {
		t.Error("the server's raw error reached an observation or a span")
	}
}
