package mcptools_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/otelhook"
	"github.com/toolsafe/toolsafe/policy"
)

// tracing records the spans of the tools wrapped with its hook.
type tracing struct {
	spans *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
	hook  *otelhook.Hook
}

func newTracing(t *testing.T) *tracing {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &tracing{spans: rec, tp: tp, hook: otelhook.New(otelhook.WithTracerProvider(tp), otelhook.WithMeterProvider(mp))}
}

// attempts returns the ended attempt spans, in order of start.
func (tr *tracing) attempts() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans.Ended() {
		if strings.HasPrefix(s.Name(), "attempt ") {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return out
}

// everything is all the text the spans hold: names, attributes, events and
// statuses.
func (tr *tracing) everything() string {
	var b strings.Builder
	for _, s := range tr.spans.Ended() {
		fmt.Fprintln(&b, s.Name(), s.Status().Description)
		for _, kv := range s.Attributes() {
			fmt.Fprintln(&b, kv.Key, kv.Value.String())
		}
		for _, e := range s.Events() {
			fmt.Fprintln(&b, e.Name)
			for _, kv := range e.Attributes {
				fmt.Fprintln(&b, kv.Key, kv.Value.String())
			}
		}
	}
	return b.String()
}

func attr(kvs []attribute.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

// only returns the one tool of the list.
func only(t *testing.T, s *testServer, opts ...mcptools.Option) *mcptools.Tool {
	t.Helper()
	ts, err := mcptools.List(context.Background(), s.session, append([]mcptools.Option{trusted}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 {
		t.Fatalf("%d tools listed; want 1", len(ts))
	}
	return ts[0].(*mcptools.Tool)
}

func fast() policy.Retry {
	return policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{Base: time.Millisecond, Max: time.Millisecond, Multiplier: 1}}
}

func wireError(code int64) *jsonrpc.Error { return &jsonrpc.Error{Code: code, Message: secret} }

// The error mapping, against a real MCP server over the SDK's in-memory
// transport: each outcome's kind, attempts and requests at the server, what
// the model sees and what the spans carry.
func TestErrorMapping(t *testing.T) {
	type outcome struct {
		kind     middleware.Kind // "" for success
		attempts int
		calls    int // tools/call requests at the server
		saw      string
		code     string // rpc.response.status_code of the first attempt's span, "" for none
	}
	cases := []struct {
		name    string
		handler func(n int32) (*mcp.CallToolResult, error) // n counts the calls from 1
		before  func(t *testing.T, s *testServer)          // between listing and calling
		input   string
		want    outcome
	}{
		{
			name: "a result with isError is a tool-error, and its text is for the model",
			handler: func(int32) (*mcp.CallToolResult, error) {
				r := text("No such city: Atlantis. Ask the user for a real city.")
				r.IsError = true
				return r, nil
			},
			want: outcome{kind: middleware.KindToolError, attempts: 1, calls: 1, saw: "No such city: Atlantis. Ask the user for a real city."},
		},
		{
			name:    "a result with isError and no text says the server gave no reason",
			handler: func(int32) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{IsError: true}, nil },
			want:    outcome{kind: middleware.KindToolError, attempts: 1, calls: 1, saw: "forecast failed; its MCP server gave no reason."},
		},
		{
			name:    "an internal error is retried, then tool-failed",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(jsonrpc.CodeInternalError) },
			want:    outcome{kind: middleware.KindFailed, attempts: 3, calls: 3, saw: "forecast failed (its MCP server failed to handle the call) after 3 attempts", code: "-32603"},
		},
		{
			name: "an internal error that clears is retried until it succeeds",
			handler: func(n int32) (*mcp.CallToolResult, error) {
				if n < 3 {
					return nil, wireError(jsonrpc.CodeInternalError)
				}
				return text("sunny"), nil
			},
			want: outcome{attempts: 3, calls: 3, saw: "sunny", code: "-32603"},
		},
		{
			name:    "a handler's plain error (code 0 on the wire) is retried",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, errors.New(secret) },
			want:    outcome{kind: middleware.KindFailed, attempts: 3, calls: 3, saw: "its MCP server failed to handle the call", code: "0"},
		},
		{
			name:    "invalid params for a tool the server lists is args-invalid",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(jsonrpc.CodeInvalidParams) },
			want:    outcome{kind: middleware.KindArgsInvalid, attempts: 1, calls: 1, saw: "its MCP server rejected the arguments", code: "-32602"},
		},
		{
			name:    "a tool the server no longer offers is a tool-error",
			handler: func(int32) (*mcp.CallToolResult, error) { return text("unreachable"), nil },
			before:  func(_ *testing.T, s *testServer) { s.server.RemoveTools("forecast") },
			want:    outcome{kind: middleware.KindToolError, attempts: 1, calls: 1, saw: "forecast is no longer offered by its MCP server.", code: "-32602"},
		},
		{
			name:    "method not found is a tool-error",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(jsonrpc.CodeMethodNotFound) },
			want:    outcome{kind: middleware.KindToolError, attempts: 1, calls: 1, saw: "its MCP server takes no tool calls", code: "-32601"},
		},
		{
			name:    "a request refused as malformed is not retried",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(jsonrpc.CodeInvalidRequest) },
			want:    outcome{kind: middleware.KindFailed, attempts: 1, calls: 1, saw: "its MCP server refused the request as malformed or unsupported", code: "-32600"},
		},
		{
			name:    "an unsupported protocol version is not retried",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(mcp.CodeUnsupportedProtocolVersion) },
			want:    outcome{kind: middleware.KindFailed, attempts: 1, calls: 1, saw: "refused the request as malformed or unsupported", code: "-32022"},
		},
		{
			name:    "a URL elicitation is not retried",
			handler: func(int32) (*mcp.CallToolResult, error) { return nil, wireError(mcp.CodeURLElicitationRequired) },
			want:    outcome{kind: middleware.KindFailed, attempts: 1, calls: 1, saw: "complete a step in a browser", code: "-32042"},
		},
		{
			name:    "input that breaks the input schema is args-invalid, before any attempt, and nothing is sent",
			handler: func(int32) (*mcp.CallToolResult, error) { return text("unreachable"), nil },
			input:   `{"city": 7}`,
			want:    outcome{kind: middleware.KindArgsInvalid, attempts: 0, calls: 0, saw: `forecast was not called: the input is invalid: argument "city" must be a string, not a number.`},
		},
		{
			name:    "a closed session is reported, not retried",
			handler: func(int32) (*mcp.CallToolResult, error) { return text("unreachable"), nil },
			before:  func(_ *testing.T, s *testServer) { _ = s.session.Close() },
			want:    outcome{kind: middleware.KindFailed, attempts: 1, calls: 0, saw: "forecast failed (its MCP session is closed) after 1 attempt. Do not call forecast again"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			s := startServer(t, nil, func(srv *mcp.Server) {
				rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return c.handler(n.Add(1))
				})
			})
			tr := newTracing(t)
			tool := toolsafe.Wrap(only(t, s), toolsafe.WithRetry(fast()), toolsafe.WithTimeout(5*time.Second), toolsafe.WithTracing(tr.hook))
			if c.before != nil {
				c.before(t, s)
			}
			input := c.input
			if input == "" {
				input = `{"city":"Oslo"}`
			}
			r := tool.Run(context.Background(), input)
			got := outcome{attempts: r.Attempts, calls: s.calls()}
			if r.Failure != nil {
				got.kind = r.Failure.Kind
			}
			if got.kind != c.want.kind || got.attempts != c.want.attempts || got.calls != c.want.calls {
				t.Errorf("kind %q, %d attempts, %d requests; want %q, %d, %d", got.kind, got.attempts, got.calls, c.want.kind, c.want.attempts, c.want.calls)
			}
			obs := r.Observation()
			if !strings.Contains(obs, c.want.saw) {
				t.Errorf("the model saw %q; want it to say %q", obs, c.want.saw)
			}
			if strings.Contains(obs, "SECRET") || strings.Contains(tr.everything(), "SECRET") {
				t.Errorf("the server's error text reached the model or a span:\n%s\n%s", obs, tr.everything())
			}
			if args := s.args("forecast"); len(slices.Compact(slices.Clone(args))) > 1 {
				t.Errorf("the attempts sent different arguments: %q", args)
			}

			spans := tr.attempts()
			if len(spans) != c.want.attempts {
				t.Fatalf("%d attempt spans; want %d", len(spans), c.want.attempts)
			}
			if len(spans) == 0 {
				return // refused before any attempt: toolsafe checked the tool's own schema
			}
			first := spans[0].Attributes()
			// Every attempt that got past the schema check called tools/call
			// (a closed session fails it in the client).
			method, set := attr(first, "mcp.method.name")
			checkedOut := c.want.kind == middleware.KindArgsInvalid && c.want.calls == 0
			if set == checkedOut || set && method != "tools/call" {
				t.Errorf("mcp.method.name %q (set: %v); want tools/call unless the schema check failed", method, set)
			}
			if code, _ := attr(first, "rpc.response.status_code"); code != c.want.code {
				t.Errorf("rpc.response.status_code %q; want %q", code, c.want.code)
			}
		})
	}
}

// A server that goes away in the middle of a call: the broken transport is
// retried, the retry finds the session closed, and that is reported.
func TestServerHangsUpMidCall(t *testing.T) {
	var s *testServer
	s = startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "forecast", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.hangUp()
			<-ctx.Done() // the server's session ends with its transport
			return nil, ctx.Err()
		})
	})
	tr := newTracing(t)
	tool := toolsafe.Wrap(only(t, s), toolsafe.WithRetry(fast()), toolsafe.WithTimeout(10*time.Second), toolsafe.WithTracing(tr.hook))
	start := time.Now()
	r := tool.Run(context.Background(), `{"city":"Oslo"}`)
	if r.Failure == nil || r.Failure.Kind != middleware.KindFailed || r.Attempts != 2 || s.calls() != 1 {
		t.Fatalf("%+v after %d requests; want tool-failed after 2 attempts, 1 request", r, s.calls())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call took %s: the broken transport was not noticed, the attempt timed out", took)
	}
	if want := "forecast failed (its MCP session is closed) after 2 attempts"; !strings.Contains(r.Observation(), want) {
		t.Errorf("the model saw %q; want %q", r.Observation(), want)
	}
	spans := tr.attempts()
	if len(spans) != 2 {
		t.Fatalf("%d attempt spans", len(spans))
	}
	// The reason is the SDK's read error's (io.EOF), or mcptools' own.
	reason, _ := attr(spans[0].Attributes(), "toolsafe.reason")
	if reason != "the connection closed before the answer was complete" && reason != "the connection to its MCP server failed" {
		t.Errorf("the first attempt's reason is %q; want a transport failure", reason)
	}
	if retryable, _ := attr(spans[0].Attributes(), "toolsafe.retryable"); retryable != "true" {
		t.Errorf("the first attempt is not retryable")
	}
}

// An attempt that outlives toolsafe's attempt timeout is cancelled at the
// server (the SDK sends notifications/cancelled) and retried.
func TestAttemptTimeoutIsRetried(t *testing.T) {
	var n atomic.Int32
	cancelled := make(chan struct{})
	s := startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "forecast", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if n.Add(1) == 1 {
				<-ctx.Done() // the server learns the client gave up
				close(cancelled)
				return nil, ctx.Err()
			}
			return text("sunny"), nil
		})
	})
	tool := toolsafe.Wrap(only(t, s), toolsafe.WithRetry(fast()), toolsafe.WithTimeout(100*time.Millisecond))
	r := tool.Run(context.Background(), `{"city":"Oslo"}`)
	if r.Failure != nil || r.Output != "sunny" || r.Attempts != 2 {
		t.Fatalf("%+v; want sunny after 2 attempts", r)
	}
	<-cancelled
	if got := s.args("forecast"); len(got) != 2 || got[0] != got[1] {
		t.Errorf("arguments %q; want the same twice", got)
	}
}

// The tools of an MCP server behave in a langchaingo tool list like any
// other: a *toolsafe.Tool checks their schema before any attempt when given
// it.
func TestSchemaCheckedBeforeAnyAttempt(t *testing.T) {
	s := startServer(t, nil, func(srv *mcp.Server) {
		rawTool(srv, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("sunny"), nil
		})
	})
	var mt tools.Tool = only(t, s)
	tool := toolsafe.Wrap(mt, toolsafe.WithArgs(mcptools.SchemaOf(mt)), toolsafe.WithRetry(fast()))
	for _, in := range []string{`{"city": ["Oslo"]}`, `"Oslo"`, `Oslo`} {
		r := tool.Run(context.Background(), in)
		if r.Failure == nil || r.Failure.Kind != middleware.KindArgsInvalid || r.Attempts != 0 {
			t.Errorf("input %s: %+v; want args-invalid with no attempt", in, r)
		}
	}
	if s.calls() != 0 {
		t.Errorf("%d requests reached the server; want 0", s.calls())
	}
	if r := tool.Run(context.Background(), `{"city":"Oslo"}`); r.Output != "sunny" || s.calls() != 1 {
		t.Errorf("a valid input: %+v, %d requests", r, s.calls())
	}
}

// Issue 27: a server that asks for a person's input (an InputRequiredResult
// of the 2026-07-28 protocol, multi round-trip) from a client that cannot
// put the question to anyone: the model is told the tool needs a person,
// as a tool-error (never a failure to retry), and nothing was applied;
// whether the client hands such results to mcptools (multi round-trip
// disabled) or the SDK tries to fulfil them itself and fails (no
// elicitation handler), over the SDK's in-memory transport and over
// Streamable HTTP.
func TestAnInputRequestIsToldAsNeedingAPerson(t *testing.T) {
	asking := func() *mcp.Server {
		server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "v1"}, nil)
		rawTool(server, "forecast", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"city": &mcp.ElicitParams{Message: "Which city?", RequestedSchema: map[string]any{"type": "object"}},
			}}, nil
		})
		return server
	}
	for _, c := range []struct {
		name     string
		disabled bool // the client's multi round-trip
		http     bool
	}{
		{"multi round-trip disabled, in memory", true, false},
		{"the SDK's multi round-trip without a handler, in memory", false, false},
		{"the SDK's multi round-trip without a handler, over Streamable HTTP to a stateless server", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := asking()
			var n atomic.Int32
			server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/call" {
						n.Add(1)
					}
					return next(ctx, method, req)
				}
			})
			var opts *mcp.ClientOptions
			if c.disabled {
				opts = &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "toolsafe-test", Version: "v1"}, opts)
			var transport mcp.Transport
			if c.http {
				// A stateless server speaks 2026-07-28, whose input requests
				// come back as results (a 2025 go-sdk server fails the call
				// itself, with its own error, when the client cannot elicit).
				srv := newHTTPServer(t, server, &mcp.StreamableHTTPOptions{Stateless: true})
				transport = &mcp.StreamableClientTransport{Endpoint: srv.URL(), DisableStandaloneSSE: true}
			} else {
				ct, st := mcp.NewInMemoryTransports()
				served, err := server.Connect(context.Background(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = served.Wait() })
				transport = ct
			}
			session, err := client.Connect(context.Background(), mcptools.Transport(transport), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = session.Close() })
			ts, err := mcptools.List(context.Background(), session)
			if err != nil {
				t.Fatal(err)
			}
			tr := newTracing(t)
			r := toolsafe.Wrap(ts[0], toolsafe.WithRetry(fast()), toolsafe.WithTracing(tr.hook)).Run(context.Background(), `{}`)
			if r.Failure == nil || r.Failure.Kind != middleware.KindToolError || r.Attempts != 1 || n.Load() != 1 {
				t.Fatalf("%s after %d attempts, %d requests; want tool-error after 1 attempt", r.Observation(), r.Attempts, n.Load())
			}
			if r.Failure.SideEffect == middleware.SideEffectUnknown || r.Failure.Retryable {
				t.Errorf("side effect %v, retryable %v; want nothing applied, not retryable", r.Failure.SideEffect, r.Failure.Retryable)
			}
			if want := "forecast needs a person's input: its MCP server asked a question"; !strings.Contains(r.Observation(), want) || strings.Contains(r.Observation(), "Which city") {
				t.Errorf("the model saw %q; want %q, without the server's question", r.Observation(), want)
			}
			if et, _ := attr(tr.attempts()[0].Attributes(), "error.type"); et != "input_required" {
				t.Errorf("error.type %q; want input_required", et)
			}
		})
	}
}
