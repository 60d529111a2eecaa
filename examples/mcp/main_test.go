package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The example runs offline against its real MCP server, a subprocess over
// stdio, and its transcript shows the retries, the model-facing tool-error,
// the check that sent nothing, and the span tree with the MCP attributes.
func TestExample(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, ""); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	t.Log("\n" + got)

	calls, rest, _ := strings.Cut(got, "\nThe server's log")
	serverLog, tree, _ := strings.Cut(rest, "\nThe span tree:")
	for _, want := range []string{
		`"required":["city"]`, // the real parameter schema
		"status: ok   attempts: 3",
		"[image: image/png, ",
		"status: error (tool-error)   attempts: 1",
		"observation: No such city: Atlantis. Ask the user for a real city, such as Oslo or Bergen.",
		"status: error (args-invalid)   attempts: 0",
		`argument "days" must be at most 7`,
		"The final answer: Oslo: sunny",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("the transcript does not show %q", want)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`execute_tool forecast .* gen_ai.tool.call.id=call_oslo  toolsafe.attempts=3`),
		regexp.MustCompile(`· retry after attempt 1, wait \d+ms \(tool-failed\)`),
		regexp.MustCompile(`· retry after attempt 2, wait \d+ms \(tool-timeout\)`),
		regexp.MustCompile(`attempt 1 .* mcp.method.name=tools/call  mcp.protocol.version=\S+  rpc.response.status_code=-32603  error.type=-32603`), // the MCP conventions' error.type
		regexp.MustCompile(`attempt 1 .* error.type=tool_error  toolsafe.reason="its upstream's message, withheld \(\d+ bytes\)`),
		regexp.MustCompile(`attempt 2 .* error.type=tool-timeout`),
		regexp.MustCompile(`gen_ai.tool.call.id=call_atlantis  toolsafe.attempts=1  error.type=tool-error`),
		regexp.MustCompile(`gen_ai.tool.call.id=call_bergen  toolsafe.attempts=0  error.type=args-invalid`),
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
	// The server's raw error is in its log, and nowhere else.
	const raw = "10.20.0.7"
	if !strings.Contains(serverLog, raw) {
		t.Errorf("the server's log lacks its raw error; the test no longer shows it is kept from the model")
	}
	if strings.Contains(calls, raw) || strings.Contains(tree, raw) {
		t.Error("the server's raw error reached an observation or a span")
	}
}
