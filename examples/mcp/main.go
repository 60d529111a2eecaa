// Command mcp is the MCP example: a langchaingo agent uses the tools of a
// real MCP server through toolsafe, and finishes although the server fails
// in every way it can.
//
// It builds the server (./server, a small Go program on the official MCP
// SDK) into a temporary directory, starts it as a subprocess over stdio
// with the SDK's CommandTransport, lists its tools with mcptools and wraps
// them with toolsafe: retries, a hard attempt timeout, the input schema
// checked before any attempt, spans. The tools' annotations decide their
// side effects (the program trusts its own server): forecast only reads and
// is retried freely; delete_alert is destructive, so the program gates it,
// and the agent run pauses for a person's approval before it runs. A
// scripted model (toolsafetest.Model: no network, no API key) asks for
// three forecasts, then to delete an alert. Then the same server over
// Streamable HTTP answers a forecast 503 with Retry-After: 1, and the call
// is retried after it. The program prints, per tool call, what happened
// and what the model saw, the servers' own logs, and the span tree.
//
//	cd examples/mcp && go run .
//	go run . -server /path/to/weather-server   # a server built already
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
	toolrun "github.com/toolsafe/toolsafe/run"
	"github.com/toolsafe/toolsafe/toolcall"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

func main() {
	server := flag.String("server", "", "path of a weather-server binary to run instead of building ./server")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *server); err != nil {
		fmt.Fprintln(os.Stderr, "mcp example:", err)
		os.Exit(1)
	}
}

// run runs the example and writes its transcript to w. serverBin is the
// server to start; "" builds ./server first.
func run(ctx context.Context, w io.Writer, serverBin string) error {
	if serverBin == "" {
		dir, err := os.MkdirTemp("", "toolsafe-mcp-example-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if serverBin, err = buildServer(ctx, dir); err != nil {
			return err
		}
	}

	// The server, a subprocess over stdio. Its log (stderr) is kept to be
	// shown after the run.
	var serverLog syncBuffer
	session, err := startServer(ctx, serverBin, &serverLog)
	if err != nil {
		return err
	}
	defer session.Close()
	// The program's own server: its annotations are trusted, so they
	// loosen the side-effect guard as well as tighten it.
	mcpTools, err := mcptools.List(ctx, session, mcptools.WithTrusted(true))
	if err != nil {
		return err
	}

	// Spans are recorded in memory, to be printed as a tree.
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	ids := toolsafe.NewCallIDs()
	var results resultLog
	grants := approval.NewGrants()
	hook := otelhook.New(otelhook.WithTracerProvider(tp))
	wrapped := wrapTools(w, mcpTools, hook, ids, grants, &results)
	if err := printTools(w, session.InitializeResult(), wrapped); err != nil {
		return err
	}
	out, err := askForForecasts(ctx, tp, ids, wrapped)
	if err != nil {
		return err
	}
	deleted, err := deleteAnAlert(ctx, w, tp, ids, grants, wrapped)
	if err != nil {
		return err
	}
	if err := session.Close(); err != nil { // the server exits; its log is complete
		return fmt.Errorf("closing the MCP session: %w", err)
	}

	// The same server over Streamable HTTP, overloaded at first.
	var httpLog syncBuffer
	if err := forecastOverHTTP(ctx, serverBin, &httpLog, hook, &results); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nThe tool calls:")
	for i, r := range results.list {
		printResult(w, i+1, r)
	}
	fmt.Fprintf(w, "\nThe final answers: %s\n  %s\n", out, deleted)
	fmt.Fprintln(w, "\nThe server's log (its raw errors stay here, never in what the model sees):")
	for line := range strings.Lines(serverLog.String()) {
		fmt.Fprint(w, "  ", line)
	}
	fmt.Fprintln(w, "\nThe log of the server over Streamable HTTP:")
	for line := range strings.Lines(httpLog.String()) {
		fmt.Fprint(w, "  ", line)
	}
	fmt.Fprintln(w, "\nThe span tree:")
	printTree(w, spans.Ended())
	return nil
}

// deleteAnAlert runs the agent on a request to delete an alert: the call
// pauses for approval, a person approves it (here, the program in their
// place), and the resumed run deletes the alert once. It returns the final
// answer.
func deleteAnAlert(ctx context.Context, w io.Writer, tp *sdktrace.TracerProvider, ids *toolsafe.CallIDs, grants *approval.Grants, wrapped []tools.Tool) (any, error) {
	del := toolsafetest.ToolCall{ID: "call_delete", Tool: "delete_alert", Arguments: `{"id":"A-7"}`}
	model := toolsafetest.NewModel(
		toolsafetest.Calls(del),
		toolsafetest.Calls(del), // the resumed run: the model asks again
		toolsafetest.Answer("Alert A-7 is deleted."),
	)
	fmt.Fprintln(w, "\nThe agent is asked to delete alert A-7:")
	runCtx := toolrun.With(ctx, "delete-alert-A-7", nil)
	for {
		executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, wrapped),
			agents.WithCallbacksHandler(ids), agents.WithMaxIterations(4))
		spanCtx, span := tp.Tracer("toolsafe-mcp-example").Start(runCtx, "invoke_agent alerts")
		out, err := executor.Call(spanCtx, map[string]any{"input": "Delete my weather alert A-7."})
		span.End()
		var ar *approval.Required
		if errors.As(err, &ar) {
			fmt.Fprintf(w, "  the run paused: %s %s needs approval (call %s): %s\n", ar.Tool, ar.Input, ar.CallID, ar.Reason)
			for _, p := range grants.Pending() {
				fmt.Fprintf(w, "  waiting in the approvals inbox: %s %s\n", p.Tool, p.Input)
			}
			grants.Grant(ar.Tool, ar.Input)
			fmt.Fprintln(w, "  a person approves it; the run resumes")
			runCtx = toolrun.Resume(runCtx, ar)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("the agent run was aborted: %w", err)
		}
		return out["output"], nil
	}
}

// forecastOverHTTP starts the server over Streamable HTTP, its log written
// to log, and asks it for a forecast: the first answer is 503 with
// Retry-After: 1, and the call is retried after it. The result is added to
// results.
func forecastOverHTTP(ctx context.Context, serverBin string, log io.Writer, hook *otelhook.Hook, results *resultLog) error {
	cmd := exec.Command(serverBin, "-http", "127.0.0.1:0")
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the MCP server over HTTP: %w", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	endpoint, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("the MCP server over HTTP printed no endpoint: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-mcp-example", Version: "v1.0.0"}, nil)
	// mcptools.Transport lets the tool see the 503 and its Retry-After, which
	// the SDK reports only as "rejected by transport".
	session, err := client.Connect(ctx, mcptools.Transport(&mcp.StreamableClientTransport{
		Endpoint: strings.TrimSpace(endpoint), DisableStandaloneSSE: true}), nil)
	if err != nil {
		return fmt.Errorf("connecting over HTTP: %w", err)
	}
	defer session.Close()
	mcpTools, err := mcptools.List(ctx, session, mcptools.WithTrusted(true), mcptools.WithFilter(func(t *mcp.Tool) bool { return t.Name == "forecast" }))
	if err != nil {
		return err
	}
	forecast := toolsafe.Wrap(mcpTools[0],
		toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{Base: 100 * time.Millisecond, Max: time.Second, Multiplier: 2}}),
		toolsafe.WithTimeout(5*time.Second), toolsafe.WithDeadline(10*time.Second),
		toolsafe.WithTracing(hook), toolsafe.WithOnResult(results.add))
	forecast.Run(ctx, `{"city":"Tromsø"}`)
	return nil
}

// startServer starts the server serverBin as a subprocess over stdio, its
// stderr written to log, and connects to it.
func startServer(ctx context.Context, serverBin string, log io.Writer) (*mcp.ClientSession, error) {
	cmd := exec.Command(serverBin)
	cmd.Stderr = log
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-mcp-example", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting the MCP server: %w", err)
	}
	return session, nil
}

// resultLog keeps the result of every tool call, in the order they ended.
type resultLog struct {
	mu   sync.Mutex
	list []middleware.Result
}

func (l *resultLog) add(_ context.Context, r middleware.Result) {
	l.mu.Lock()
	l.list = append(l.list, r)
	l.mu.Unlock()
}

// wrapTools wraps each MCP tool with toolsafe: retries, a hard attempt
// timeout, a deadline, call IDs, spans, and its results kept in results.
// Its side effects come from its annotations; one they say is destructive
// is gated by grants, every attempt. It prints what each tool got, and why.
func wrapTools(w io.Writer, mcpTools []tools.Tool, hook *otelhook.Hook, ids *toolsafe.CallIDs, grants *approval.Grants, results *resultLog) []tools.Tool {
	var wrapped []tools.Tool
	fmt.Fprintln(w, "Side effects, from the tools' annotations (the program trusts its own server):")
	for _, t := range mcpTools {
		opts := []toolsafe.Option{ // its inputSchema is checked before any attempt
			toolsafe.WithRetry(policy.Retry{MaxRetries: 3, Backoff: policy.Backoff{
				Base: 100 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.25}}),
			toolsafe.WithTimeout(500 * time.Millisecond), // per attempt
			toolsafe.WithDeadline(10 * time.Second),
			toolsafe.WithCallIDs(ids),
			toolsafe.WithTracing(hook),
			toolsafe.WithOnResult(results.add),
		}
		h := t.(*mcptools.Tool).Hints()
		effects, from := h.SideEffects()
		gate := "not gated"
		if destructive, why := h.ApprovalCandidate(); destructive {
			opts = append(opts, toolsafe.WithApproval(grants, approval.ApproveEachAttempt))
			gate = "destructive (" + why + "): every attempt needs a person's approval"
		}
		fmt.Fprintf(w, "  %s: side effects %s (%s); %s\n", t.Name(), effects, from, gate)
		wrapped = append(wrapped, toolsafe.Wrap(t, opts...))
	}
	return wrapped
}

// printTools prints the server and the tools it offers, as the model sees
// them.
func printTools(w io.Writer, info *mcp.InitializeResult, wrapped []tools.Tool) error {
	fmt.Fprintf(w, "MCP server %s %s, protocol %s, tools:\n", info.ServerInfo.Name, info.ServerInfo.Version, info.ProtocolVersion)
	defs, err := toolcall.Definitions(wrapped...)
	if err != nil {
		return err
	}
	for _, d := range defs {
		params, _ := json.Marshal(d.Function.Parameters)
		fmt.Fprintf(w, "  %s: %s\n    parameters: %s\n", d.Function.Name, d.Function.Description, params)
	}
	return nil
}

// askForForecasts runs the agent with the scripted model, which asks for
// three forecasts, under one span, and returns its final answer.
func askForForecasts(ctx context.Context, tp *sdktrace.TracerProvider, ids *toolsafe.CallIDs, wrapped []tools.Tool) (any, error) {
	model := toolsafetest.NewModel(
		toolsafetest.Calls(toolsafetest.ToolCall{ID: "call_oslo", Tool: "forecast", Arguments: `{"city":"Oslo","days":2}`}),
		toolsafetest.Calls(toolsafetest.ToolCall{ID: "call_atlantis", Tool: "forecast", Arguments: `{"city":"Atlantis"}`}),
		toolsafetest.Calls(toolsafetest.ToolCall{ID: "call_bergen", Tool: "forecast", Arguments: `{"city":"Bergen","days":30}`}),
		toolsafetest.Answer("Oslo: sunny and 4°C for the next two days. Atlantis is not a real city. "+
			"For Bergen I can forecast at most 7 days; shall I?"),
	)
	executor := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, wrapped),
		agents.WithCallbacksHandler(ids), agents.WithMaxIterations(6))
	runCtx, span := tp.Tracer("toolsafe-mcp-example").Start(ctx, "invoke_agent weather")
	out, err := executor.Call(runCtx, map[string]any{"input": "What is the weather in Oslo, Atlantis and Bergen?"})
	span.End()
	if err != nil {
		return nil, fmt.Errorf("the agent run was aborted: %w", err)
	}
	return out["output"], nil
}

// buildServer builds ./server into dir and returns the binary's path.
func buildServer(ctx context.Context, dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "server")
	if _, err := os.Stat(filepath.Join(src, "main.go")); !ok || err != nil {
		return "", errors.New("the server's source is not where this program was built from: build ./server yourself and pass -server")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("no go command to build the server with: build ./server yourself and pass -server")
	}
	bin := filepath.Join(dir, "weather-server")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the server: %w\n%s", err, out)
	}
	return bin, nil
}

func printResult(w io.Writer, n int, r middleware.Result) {
	status := r.Status()
	if r.Failure != nil {
		status += " (" + string(r.Failure.Kind) + ")"
	}
	delays := "none" // r.Delays: before attempts 2..n
	if len(r.Delays) > 0 {
		parts := make([]string, len(r.Delays))
		for i, d := range r.Delays {
			parts[i] = d.Round(time.Millisecond).String()
		}
		delays = "[" + strings.Join(parts, " ") + "]"
	}
	fmt.Fprintf(w, "[%d] %s (call %s)\n", n, r.Tool, r.CallID)
	fmt.Fprintf(w, "    status: %s   attempts: %d   delays: %s   took: %s\n", status, r.Attempts, delays, roundTook(r.Elapsed))
	obs := strings.ReplaceAll(r.Observation(), "\n", "\n                 ")
	if r.Status() == "paused" {
		obs = "(none: the run pauses for approval)" // as the other examples say
	}
	fmt.Fprintf(w, "    observation: %s\n", obs)
}

// printTree prints spans as an indented tree, children in the order they
// started, with the attributes that tell the story.
func printTree(w io.Writer, spans []sdktrace.ReadOnlySpan) {
	slices.SortFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	children := map[string][]sdktrace.ReadOnlySpan{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID().String()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		parent := s.Parent().SpanID().String()
		if !s.Parent().IsValid() || !ids[parent] {
			roots = append(roots, s)
			continue
		}
		children[parent] = append(children[parent], s)
	}
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		indent := strings.Repeat("  ", depth+1)
		fmt.Fprintf(w, "%s%s  %s%s\n", indent, s.Name(), roundTook(s.EndTime().Sub(s.StartTime())), describeSpan(s))
		for _, e := range s.Events() {
			fmt.Fprintf(w, "%s  · %s\n", indent, describeEvent(e))
		}
		for _, c := range children[s.SpanContext().SpanID().String()] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// describeSpan is the part of a span's attributes worth a line in the tree.
func describeSpan(s sdktrace.ReadOnlySpan) string {
	if strings.HasPrefix(s.Name(), "execute_tool ") {
		return pick(s.Attributes(), "gen_ai.tool.call.id", "toolsafe.attempts", "error.type")
	}
	return pick(s.Attributes(), "mcp.method.name", "mcp.protocol.version", "mcp.session.id",
		"rpc.response.status_code", "error.type", "toolsafe.reason")
}

// describeEvent says what a span event records: "retry after attempt 1,
// delay 115ms (tool-failed)" (toolsafe.delay_s).
func describeEvent(e sdktrace.Event) string {
	if e.Name != "retry" {
		return e.Name + pick(e.Attributes)
	}
	var attempt int64
	var delay float64
	var kind string
	for _, kv := range e.Attributes {
		switch kv.Key {
		case "toolsafe.attempt":
			attempt = kv.Value.AsInt64()
		case "toolsafe.delay_s":
			delay = kv.Value.AsFloat64()
		case "error.type":
			kind = kv.Value.AsString()
		}
	}
	d := time.Duration(delay * float64(time.Second)).Round(time.Millisecond)
	return fmt.Sprintf("retry after attempt %d, delay %s (%s)", attempt, d, kind)
}

// pick formats the attributes named, in that order, as "  key=value ...".
func pick(kvs []attribute.KeyValue, keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		for _, kv := range kvs {
			if string(kv.Key) == k {
				v := kv.Value.String()
				if strings.ContainsAny(v, " ") {
					v = fmt.Sprintf("%q", v)
				}
				fmt.Fprintf(&b, "  %s=%s", k, v)
			}
		}
	}
	return b.String()
}

func roundTook(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// syncBuffer is a bytes.Buffer safe for the writes of exec's stderr copier
// and a read after the process ended.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
