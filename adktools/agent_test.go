package adktools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe/adktools"
	"github.com/toolsafe/toolsafe/adktools/adktest"
	"github.com/toolsafe/toolsafe/toolsafetest"
	"github.com/toolsafe/toolsafe/toolsafetest/billing"
	"github.com/toolsafe/toolsafe/toolsafetest/refunds"
)

// scripted is adktest's Model, failing the test for a call it never
// answered.
type scripted struct{ *adktest.Model }

func script(turns ...adktest.Turn) *scripted { return &scripted{adktest.NewModel(turns...)} }

func (m *scripted) response(t *testing.T, id string) map[string]any {
	t.Helper()
	r, ok := m.Response(id)
	if !ok {
		t.Fatalf("the model never saw an answer to call %s", id)
	}
	return r
}

func (m *scripted) left() int { return m.Left() }

func calls(cs ...adktest.Call) adktest.Turn { return adktest.Calls(cs...) }

func call(id, name string, args map[string]any) adktest.Call {
	return adktest.Call{ID: id, Name: name, Args: args}
}

func say(text string) adktest.Turn { return adktest.Answer(text) }

// loop is ADK's agent loop for the tools and model: an llmagent, its runner
// and an in-memory session service.
type loop struct {
	r *runner.Runner
}

func newLoop(t *testing.T, m model.LLM, tools ...tool.Tool) *loop {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: "clerk", Model: m, Instruction: "Help with billing.", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "billing", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	return &loop{r: r}
}

// run runs msg in session s and returns the events; an error fails t.
func (l *loop) run(t *testing.T, ctx context.Context, s string, msg *genai.Content) []*session.Event {
	t.Helper()
	var evs []*session.Event
	for ev, err := range l.r.Run(ctx, "user", s, msg, agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("the agent run failed: %v", err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func ask(q string) *genai.Content { return genai.NewContentFromText(q, genai.RoleUser) }

// finalText is the text of the run's last event.
func finalText(evs []*session.Event) string {
	if len(evs) == 0 || evs[len(evs)-1].Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range evs[len(evs)-1].Content.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// traced returns a context with a root span of the test's own, and a
// function that ends it and returns the spans of its trace.
func traced(t *testing.T) (context.Context, func() []sdktrace.ReadOnlySpan) {
	ctx, root := otel.Tracer("test").Start(context.Background(), t.Name())
	id := root.SpanContext().TraceID()
	return ctx, func() []sdktrace.ReadOnlySpan {
		root.End()
		var out []sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			if s.SpanContext().TraceID() == id && s.SpanContext().SpanID() != root.SpanContext().SpanID() {
				out = append(out, s)
			}
		}
		return out
	}
}

type invoiceArgs struct {
	Number string `json:"number" jsonschema:"the invoice number, such as INV-1001"`
}

// fetchInvoice is the billing example's fetch_invoice as an ADK function
// tool: a real HTTP GET to the upstream at url.
func fetchInvoice(t *testing.T, url string) adktools.FunctionTool {
	t.Helper()
	lt := billing.FetchInvoice(url, toolsafetest.NoKeepAliveClient())
	return function(t, "fetch_invoice", "Fetches one invoice by its number.", func(ctx agent.Context, a invoiceArgs) (map[string]any, error) {
		return callJSON(ctx, lt.Call, a)
	})
}

type refundArgs struct {
	Order     string  `json:"order"`
	AmountEUR float64 `json:"amount_eur"`
}

// refund is the approval example's refund as an ADK function tool: a real
// HTTP POST with the call's idempotency key.
func refund(t *testing.T, url string) adktools.FunctionTool {
	t.Helper()
	lt := refunds.Tool(url, toolsafetest.NoKeepAliveClient(), true)
	return function(t, "refund", "Refunds an order.", func(ctx agent.Context, a refundArgs) (map[string]any, error) {
		return callJSON(ctx, lt.Call, a)
	})
}

func function[A any](t *testing.T, name, desc string, f func(agent.Context, A) (map[string]any, error)) adktools.FunctionTool {
	t.Helper()
	ft, err := functiontool.New(functiontool.Config{Name: name, Description: desc}, f)
	if err != nil {
		t.Fatal(err)
	}
	return ft.(adktools.FunctionTool)
}

// callJSON calls a langchaingo tool body with args as JSON, and reads its
// answer as a JSON object.
func callJSON(ctx context.Context, f func(context.Context, string) (string, error), args any) (map[string]any, error) {
	in, _ := json.Marshal(args)
	out, err := f(ctx, string(in))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		return nil, err
	}
	return m, nil
}
