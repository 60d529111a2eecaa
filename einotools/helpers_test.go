package einotools_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/middleware"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scripted is a model.ToolCallingChatModel that answers turn by turn and
// keeps what it was sent. It is safe for concurrent use.
type scripted struct {
	mu     sync.Mutex
	turns  []*schema.Message
	inputs [][]*schema.Message
}

var _ model.ToolCallingChatModel = (*scripted)(nil)

func script(turns ...*schema.Message) *scripted { return &scripted{turns: turns} }

func (m *scripted) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inputs = append(m.inputs, append([]*schema.Message(nil), input...))
	if len(m.turns) == 0 {
		return nil, errors.New("scripted model: no turn left")
	}
	next := m.turns[0]
	m.turns = m.turns[1:]
	return next, nil
}

func (m *scripted) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// observations are the tool results the model was last sent, by call ID.
func (m *scripted) observations() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	if len(m.inputs) == 0 {
		return out
	}
	for _, msg := range m.inputs[len(m.inputs)-1] {
		if msg.Role == schema.Tool {
			out[msg.ToolCallID] = msg.Content
		}
	}
	return out
}

// calls is a model turn that calls tools, all at once.
func calls(cs ...schema.ToolCall) *schema.Message { return schema.AssistantMessage("", cs) }

func answer(text string) *schema.Message { return schema.AssistantMessage(text, nil) }

func toolCall(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// store is an in-memory adk.CheckPointStore.
type store struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newStore() *store { return &store{m: map[string][]byte{}} }

func (s *store) Set(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = append([]byte(nil), value...)
	return nil
}

func (s *store) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

// runner is Eino's ChatModelAgent with the tools (and ToolsNode
// middlewares), on a runner that checkpoints to st.
func runner(t *testing.T, llm model.ToolCallingChatModel, st adk.CheckPointStore, ts []tool.BaseTool, mws ...compose.ToolMiddleware) *adk.Runner {
	t.Helper()
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "answers with tools", Instruction: "use the tools",
		Model: llm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
			Tools: ts, ToolCallMiddlewares: mws,
		}},
		MaxIterations: 8,
	})
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: agent, CheckPointStore: st})
}

// outcome is how an agent run ended.
type outcome struct {
	answer    string
	interrupt *adk.InterruptInfo
	err       error
}

func drive(iter *adk.AsyncIterator[*adk.AgentEvent]) outcome {
	var o outcome
	for {
		ev, ok := iter.Next()
		if !ok {
			return o
		}
		if ev.Err != nil {
			o.err = ev.Err
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			o.interrupt = ev.Action.Interrupted
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg != nil &&
				msg.Role == schema.Assistant && len(msg.ToolCalls) == 0 {
				o.answer = msg.Content
			}
		}
	}
}

// invoices is the billing upstream: GET /invoices/{number}.
func invoices() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /invoices/{number}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("number") != "INV-1001" {
			http.Error(w, `{"error":"no such invoice in ledger shard 7"}`, http.StatusNotFound)
			return
		}
		_, _ = io.WriteString(w, `{"number":"INV-1001","status":"paid"}`)
	})
	return mux
}

type invoiceArgs struct {
	Number string `json:"number" jsonschema:"description=the invoice number such as INV-1001"`
}

// fetchInvoice is an Eino tool that reads an invoice from the upstream at
// base with a real HTTP GET.
func fetchInvoice(t *testing.T, base string, client *http.Client) tool.InvokableTool {
	t.Helper()
	it, err := utils.InferTool("fetch_invoice", "Fetches one invoice by its number.",
		func(ctx context.Context, in invoiceArgs) (string, error) {
			if !strings.HasPrefix(in.Number, "INV-") {
				return "", middleware.NewToolError("%q is not an invoice number: numbers look like INV-1001", in.Number)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/invoices/"+in.Number, nil)
			if err != nil {
				return "", err
			}
			return middleware.DoHTTP(client, req)
		})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// effects counts the side effects a tool applied, by idempotency key: a
// key seen before applies nothing. It is safe for concurrent use.
type effects struct {
	mu      sync.Mutex
	applied int
	calls   int
	keys    map[string]bool
}

func (e *effects) apply(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.keys == nil {
		e.keys = map[string]bool{}
	}
	if key == "" || !e.keys[key] {
		e.keys[key] = true
		e.applied++
	}
	return fmt.Sprintf("applied (%d so far)", e.applied)
}

func (e *effects) sawKey(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.keys[key]
}

func (e *effects) counts() (calls, applied int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls, e.applied
}

type orderArgs struct {
	Order string `json:"order" jsonschema:"description=the order such as A-1001"`
}

// sideEffect is an Eino tool named name that applies e once per
// idempotency key.
func sideEffect(t *testing.T, name string, e *effects) tool.InvokableTool {
	t.Helper()
	it, err := utils.InferTool(name, "Applies "+name+" to an order.",
		func(ctx context.Context, in orderArgs) (string, error) {
			return name + " " + in.Order + ": " + e.apply(middleware.IdempotencyKey(ctx)), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return it
}
