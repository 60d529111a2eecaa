package mcptools_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/mcptools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
)

// billingServer is a go-sdk server with charge, which has no annotations
// (side effects without a key), and lookup, which is read-only.
func billingServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "charge", Description: "Charges a card.", InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("charged"), nil })
	rawTool(server, "lookup", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("found"), nil
	})
	return server
}

// toolNamed returns the tool of ts called name.
func toolNamed(t *testing.T, ts []tools.Tool, name string) *mcptools.Tool {
	t.Helper()
	for _, lt := range ts {
		if lt.Name() == name {
			return lt.(*mcptools.Tool)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// beforeRetry runs f before every attempt after the first, inside the
// attempt: a test's hook between attempts that keeps the tool's hints.
type beforeRetry struct {
	*mcptools.Tool
	f func()
}

func (b beforeRetry) Call(ctx context.Context, input string) (string, error) {
	if middleware.AttemptNumber(ctx) > 1 {
		b.f()
	}
	return b.Tool.Call(ctx, input)
}

// Issue 27: the transport faults of Streamable HTTP, told as they are,
// through a reverse proxy on 127.0.0.1 in front of a go-sdk server. A
// request that never reached the server (a refused connection, a 429 or
// 503, a session the server forgot) is sent again even for a tool with
// side effects, after Retry-After when there is one; an answer lost after
// the server acted (a 502, a dropped connection, a cut response stream)
// is an unknown outcome, not sent again. For each: the requests at the
// proxy and at the server, the Kind, the model's text and error.type.
func TestTransportFaultsAreToldAsTheyAre(t *testing.T) {
	type want struct {
		kind          middleware.Kind // "" for ok
		attempts      int
		proxy, server int
		errType       string // of the first attempt's span
		saw           string
		unknown       bool
		minWait       time.Duration
	}
	for _, c := range []struct {
		name      string
		tool      string
		faults    []fault
		refuse    bool // the proxy refuses connections for the first attempt
		reconnect bool
		want      want
	}{
		{name: "a 503 with Retry-After is retried after it, even without a key", tool: "charge", faults: []fault{answer503},
			want: want{attempts: 2, proxy: 2, server: 1, errType: "503", saw: "charged", minWait: time.Second}},
		{name: "a 429 with Retry-After is retried after it", tool: "charge", faults: []fault{answer429},
			want: want{attempts: 2, proxy: 2, server: 1, errType: "429", saw: "charged", minWait: time.Second}},
		{name: "a refused connection never reached the server: sent again", tool: "charge", refuse: true,
			want: want{attempts: 2, proxy: 1, server: 1, errType: "not_sent", saw: "charged"}},
		{name: "a session the server forgot is rebuilt and the call sent on it", tool: "charge", faults: []fault{forget}, reconnect: true,
			want: want{attempts: 1, proxy: 2, server: 1, saw: "charged"}},
		{name: "a session the server forgot, with no way to rebuild it, was not applied", tool: "charge", faults: []fault{forget},
			want: want{kind: middleware.KindFailed, attempts: 1, proxy: 1, server: 0, errType: "404", saw: "its MCP server no longer knows the session"}},
		{name: "a 502 after the server acted is an unknown outcome", tool: "charge", faults: []fault{answer502},
			want: want{kind: middleware.KindFailed, attempts: 1, proxy: 1, server: 1, errType: "502", saw: "HTTP 502", unknown: true}},
		{name: "a connection dropped after the server acted is an unknown outcome", tool: "charge", faults: []fault{dropAfter},
			want: want{kind: middleware.KindFailed, attempts: 1, proxy: 1, server: 1, errType: "response_lost", saw: "the connection closed before the answer was complete", unknown: true}},
		{name: "a response stream cut after the request arrived is an unknown outcome", tool: "charge", faults: []fault{cutStream},
			want: want{kind: middleware.KindFailed, attempts: 1, proxy: 1, server: 1, errType: "response_lost", saw: "failed after the request was sent", unknown: true}},
		{name: "a cut stream of a trusted read-only tool is re-issued as a new request", tool: "lookup", faults: []fault{cutStream},
			want: want{attempts: 2, proxy: 2, server: 2, errType: "response_lost", saw: "found"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newHTTPServer(t, billingServer(), nil)
			var hc *http.Client
			if c.refuse {
				// No connection kept alive: one the proxy closed could take a
				// request that no server reads, an answer lost to the client.
				hc = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			}
			session, reconnect := srv.connect("2025-11-25", hc) // a session with an ID
			opts := []mcptools.Option{trusted}
			if c.reconnect {
				opts = append(opts, reconnect)
			}
			ts, err := mcptools.List(context.Background(), session, opts...)
			if err != nil {
				t.Fatal(err)
			}
			var tool tools.Tool = toolNamed(t, ts, c.tool)
			if c.refuse {
				srv.stop()
				tool = beforeRetry{Tool: tool.(*mcptools.Tool), f: srv.start}
			}
			srv.inject(c.faults...)
			tr := newTracing(t)
			r := toolsafe.Wrap(tool, toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Constant(time.Millisecond)}),
				toolsafe.WithTimeout(10*time.Second), toolsafe.WithTracing(tr.hook)).Run(context.Background(), `{"city":"Oslo"}`)
			proxy, server := srv.counts()
			if r.Kind() != c.want.kind || r.Attempts != c.want.attempts || proxy != c.want.proxy || server != c.want.server {
				t.Fatalf("kind %q after %d attempts, %d requests at the proxy, %d at the server (%s); want %q, %d, %d, %d",
					r.Kind(), r.Attempts, proxy, server, r.Observation(), c.want.kind, c.want.attempts, c.want.proxy, c.want.server)
			}
			if obs := r.Observation(); !strings.Contains(obs, c.want.saw) || strings.Contains(obs, "SECRET") {
				t.Errorf("the model saw %q; want it to say %q", obs, c.want.saw)
			}
			unknown := r.Failure != nil && r.Failure.SideEffect == middleware.SideEffectUnknown
			if unknown != c.want.unknown || unknown && !strings.Contains(r.Observation(), "may have been applied") {
				t.Errorf("outcome unknown: %v; want %v (%s)", unknown, c.want.unknown, r.Observation())
			}
			if c.want.minWait > 0 && (len(r.Delays) != 1 || r.Delays[0] < c.want.minWait) {
				t.Errorf("waits %v; want one of at least %v (Retry-After)", r.Delays, c.want.minWait)
			}
			attempts := tr.attempts()
			if len(attempts) != c.want.attempts {
				t.Fatalf("%d attempt spans", len(attempts))
			}
			if et, _ := attr(attempts[0].Attributes(), "error.type"); et != c.want.errType {
				t.Errorf("the first attempt's error.type is %q; want %q", et, c.want.errType)
			}
			if strings.Contains(tr.everything(), "SECRET") {
				t.Error("the proxy's text reached a span")
			}
		})
	}
}
