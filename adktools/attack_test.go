package adktools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/mcptoolset"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// recording is a scripted model that keeps every request ADK sends it, as
// JSON: the model's whole view of the run.
type recording struct {
	*scripted
	mu   sync.Mutex
	seen []string
}

func (m *recording) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	b, _ := json.Marshal(req.Contents)
	m.mu.Lock()
	m.seen = append(m.seen, string(b))
	m.mu.Unlock()
	return m.scripted.GenerateContent(ctx, req, stream)
}

func (m *recording) everything() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, "\n")
}

// tokenOf is the pause token in a Request.ID ("<ADK id>#<token>").
func tokenOf(t *testing.T, r adktools.Request) string {
	t.Helper()
	i := strings.LastIndex(r.ID, "#")
	if i < 0 {
		t.Fatalf("request %q carries no token", r.ID)
	}
	return r.ID[i+1:]
}

// answerIn runs msg in session s, whatever ADK makes of it (it may end the
// run with an error of its own for an answer it cannot place).
func answerIn(ctx context.Context, l *loop, s string, msg *genai.Content) []*session.Event {
	var evs []*session.Event
	for ev, err := range l.r.Run(ctx, "user", s, msg, agent.RunConfig{}) {
		if err == nil && ev != nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// Attacks on ADK's confirmations: a pause token never reaches the model's
// history; an answer replayed into another session whose call has the same
// ID, or carrying the token of another call of the same session, decides
// nothing; and each pause's own answer still applies its refund once.
func TestAnADKAnswerDecidesOnlyItsOwnPauseInItsOwnSession(t *testing.T) {
	ledger := refunds.NewLedger()
	up := toolsafetest.NewUpstream(ledger.Handler())
	t.Cleanup(up.Close)
	w := adktools.Wrap(refund(t, up.URL()), toolsafe.WithApproval(adktools.Confirmations(nil)),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	m := &recording{scripted: script(
		// s1: two refunds at once, call-1 and call-2.
		calls(call("call-1", "refund", map[string]any{"order": "A-1", "amount_eur": 900}),
			call("call-2", "refund", map[string]any{"order": "A-2", "amount_eur": 50})),
		// s2: a refund whose call ID is also call-1.
		calls(call("call-1", "refund", map[string]any{"order": "B-1", "amount_eur": 9000})),
		say("Done."), say("Done."), say("Done."), say("Done."), say("Done."),
	)}
	l := newLoop(t, m, w)
	ctx, ended := traced(t)
	s1 := requestsIn(l.run(t, ctx, "s1", ask("Refund A-1 and A-2.")))
	s2 := requestsIn(l.run(t, ctx, "s2", ask("Refund B-1.")))
	if len(s1) != 2 || len(s2) != 1 {
		t.Fatalf("requests: s1 %+v, s2 %+v; want two and one", s1, s2)
	}
	byCall := map[string]adktools.Request{}
	for _, r := range s1 {
		byCall[r.Pause.CallID] = r
	}
	one, two := byCall["call-1"], byCall["call-2"]

	// s1's answer for its call-1, replayed into s2, whose call-1 waits too.
	answerIn(ctx, l, "s2", adktools.Answer(one.ID, true))
	// call-1's request in s1, carrying call-2's token.
	swapped := one.ID[:strings.LastIndex(one.ID, "#")+1] + tokenOf(t, two)
	answerIn(ctx, l, "s1", adktools.Answer(swapped, true))
	// s2's answer, carrying s1's call-1 token.
	answerIn(ctx, l, "s2", adktools.Answer(s2[0].ID[:strings.LastIndex(s2[0].ID, "#")+1]+tokenOf(t, one), true))
	if ledger.Applied() != 0 || up.Requests(refunds.Path) != 0 {
		t.Fatalf("%d refunds applied from %d requests by answers to other pauses; want none", ledger.Applied(), up.Requests(refunds.Path))
	}
	// Each pause's own answer applies its own refund, once.
	answerIn(ctx, l, "s2", adktools.Answer(s2[0].ID, true))
	answerIn(ctx, l, "s1", adktools.Answer(one.ID, true))
	if ledger.Applied() != 2 || up.Requests(refunds.Path) != 2 {
		t.Fatalf("%d refunds applied from %d requests; want the two confirmed ones", ledger.Applied(), up.Requests(refunds.Path))
	}
	// ADK v2.2.0 records the event of parallel calls whole, its actions
	// with the confirmations asked, on its execute_tool (merged) span as
	// gcp.vertex.agent.tool_response: the one place a token reaches a span
	// (the README says so). No other attribute, toolsafe's none, has it.
	var inSpans strings.Builder
	for _, sp := range ended() {
		for _, kv := range sp.Attributes() {
			if kv.Key != "gcp.vertex.agent.tool_response" {
				inSpans.WriteString(kv.Value.String() + "\n")
			}
		}
		for _, e := range sp.Events() {
			for _, kv := range e.Attributes {
				inSpans.WriteString(kv.Value.String() + "\n")
			}
		}
	}
	if inSpans.Len() == 0 {
		t.Fatal("no span attributes recorded")
	}
	for _, tok := range []string{tokenOf(t, one), tokenOf(t, two), tokenOf(t, s2[0])} {
		if strings.Contains(m.everything(), tok) {
			t.Errorf("the pause token %s reached the model's history", tok)
		}
		if strings.Contains(inSpans.String(), tok) {
			t.Errorf("the pause token %s reached a span", tok)
		}
	}
}

// Attack: the model gives two refunds of one turn the same call ID, so
// one pause is kept over the other in the session's state (and ADK asks
// one confirmation per call ID). What the person confirms is what runs, or
// nothing: never the refund they were not shown.
func TestTwoCallsWithOneIDInOneTurnApplyOnlyWhatEachRequestShowed(t *testing.T) {
	ledger := refunds.NewLedger()
	var mu sync.Mutex
	var bodies []string
	up := toolsafetest.NewUpstream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		ledger.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	w := adktools.Wrap(refund(t, up.URL()), toolsafe.WithApproval(adktools.Confirmations(nil)),
		toolsafe.WithSideEffects(middleware.SideEffectsWithKey))
	m := script(calls(call("call-1", "refund", map[string]any{"order": "A-1", "amount_eur": 900}),
		call("call-1", "refund", map[string]any{"order": "A-1", "amount_eur": 9000})),
		say("Done."), say("Done."), say("Done."))
	l := newLoop(t, m, w)
	reqs := requestsIn(answerIn(context.Background(), l, "s1", ask("Refund A-1.")))
	if len(reqs) == 0 {
		t.Fatal("nothing was asked")
	}
	var shown []string
	for _, r := range reqs {
		shown = append(shown, r.Pause.Input)
		answerIn(context.Background(), l, "s1", adktools.Answer(r.ID, true))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bodies {
		var got, want map[string]any
		_ = json.Unmarshal([]byte(b), &got)
		ok := false
		for _, in := range shown {
			_ = json.Unmarshal([]byte(in), &want)
			ok = ok || got["amount_eur"] == want["amount_eur"]
		}
		if !ok {
			t.Errorf("the upstream was sent %s; the person confirmed only %v", b, shown)
		}
	}
}

// readonly is the read-only ADK context a program lists a toolset's tools
// with before it builds its agent.
type readonly struct{ context.Context }

func (readonly) UserContent() *genai.Content          { return nil }
func (readonly) InvocationID() string                 { return "" }
func (readonly) AgentName() string                    { return "clerk" }
func (readonly) ReadonlyState() session.ReadonlyState { return nil }
func (readonly) UserID() string                       { return "user" }
func (readonly) AppName() string                      { return "billing" }
func (readonly) SessionID() string                    { return "" }
func (readonly) Branch() string                       { return "" }

// Attack: an MCP server's tool reached through ADK's own mcptoolset and
// wrapped by adktools. ADK drops the tool's annotations, so toolsafe took
// it for a tool without side effects: a charge that acted and then failed
// with an internal error was retried, and charged three times. With no
// annotations to read, an MCP tool has the specification's defaults (not
// read-only, not idempotent): side effects without a key, so it is not sent
// again, and the model is told it may have been applied. An explicit
// option still wins.
func TestAnMCPToolThroughADKsToolsetIsNotRetriedAfterItMayHaveActed(t *testing.T) {
	var charges atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "v1"}, nil)
	server.AddTool(&mcp.Tool{Name: "charge", Description: "Charges a card.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			charges.Add(1)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "SECRET db down"}
		})
	ct, st := mcp.NewInMemoryTransports()
	served, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = served.Close() })
	set, err := mcptoolset.New(mcptoolset.Config{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := set.Tools(readonly{context.Background()})
	if err != nil || len(ts) != 1 {
		t.Fatalf("the toolset's tools: %v, %d", err, len(ts))
	}
	retry := toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: noWait})
	charge := adktools.Wrap(ts[0].(adktools.FunctionTool), retry)
	m := script(calls(call("call-1", "charge", map[string]any{"order": "A-1"})), say("I could not tell."))
	newLoop(t, m, charge).run(t, context.Background(), "s1", ask("Charge A-1."))
	msg, _ := m.response(t, "call-1")["error"].(string)
	if charges.Load() != 1 || !strings.Contains(msg, "may have been applied") || strings.Contains(msg, "SECRET") {
		t.Fatalf("%d charges, the model was told %q; want 1 charge, told it may have been applied", charges.Load(), msg)
	}
	// The program says the tool only reads: it is retried.
	charges.Store(0)
	read := adktools.Wrap(ts[0].(adktools.FunctionTool), retry, toolsafe.WithSideEffects(middleware.NoSideEffects))
	m = script(calls(call("call-2", "charge", map[string]any{"order": "A-1"})), say("It failed."))
	newLoop(t, m, read).run(t, context.Background(), "s2", ask("Charge A-1."))
	if charges.Load() != 3 {
		t.Errorf("%d calls with WithSideEffects(NoSideEffects); want 3: the option wins", charges.Load())
	}
}
