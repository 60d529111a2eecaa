package toolcall_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/toolsafe/toolsafe"
	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policy"
	"github.com/toolsafe/toolsafe/toolcall"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// toolCalls are a model's tool calls: id, name, arguments, ...
func toolCalls(calls ...string) []llms.ToolCall {
	var tcs []llms.ToolCall
	for i := 0; i+2 < len(calls); i += 3 {
		tcs = append(tcs, llms.ToolCall{ID: calls[i], Type: "function",
			FunctionCall: &llms.FunctionCall{Name: calls[i+1], Arguments: calls[i+2]}})
	}
	return tcs
}

// loop is the program's own agent loop of the package documentation.
func loop(ctx context.Context, llm llms.Model, ts []tools.Tool, question string, opts ...toolcall.Option) (string, error) {
	defs, err := toolcall.Definitions(ts...)
	if err != nil {
		return "", err
	}
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, question)}
	for range 5 {
		resp, err := llm.GenerateContent(ctx, history, llms.WithTools(defs))
		if err != nil {
			return "", err
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			return choice.Content, nil
		}
		results, err := toolcall.Dispatch(ctx, ts, choice.ToolCalls, opts...)
		if err != nil {
			return "", err
		}
		history = append(history, toolcall.Messages(choice.ToolCalls, results)...)
	}
	return "", errors.New("too many turns")
}

// meeting is a tool whose calls wait until n of them have started: two
// calls of one turn finish only if Dispatch runs them at the same time.
type meeting struct {
	n       int32
	started atomic.Int32
	all     chan struct{}
	once    sync.Once
}

func newMeeting(n int32) *meeting { return &meeting{n: n, all: make(chan struct{})} }

func (m *meeting) arrive(ctx context.Context) error {
	if m.started.Add(1) == m.n {
		m.once.Do(func() { close(m.all) })
	}
	select {
	case <-m.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A scripted model calls three tools at once in one turn: the calls run
// concurrently, each through its toolsafe stack (one is retried), an
// unknown tool is answered, and the model gets every response, in order,
// with the real parameter schemas advertised.
func TestDispatchParallelCallsOfOneTurn(t *testing.T) {
	meet := newMeeting(2)
	var invoiceCalls atomic.Int32
	var mu sync.Mutex
	var inputs []string
	invoice := toolsafe.Wrap(middleware.Func("fetch_invoice", "Fetches an invoice.", func(ctx context.Context, in string) (string, error) {
		mu.Lock()
		inputs = append(inputs, in)
		mu.Unlock()
		if err := meet.arrive(ctx); err != nil {
			return "", err
		}
		if invoiceCalls.Add(1) == 1 {
			return "", middleware.Transient(errors.New("billing: connection reset by peer"))
		}
		return "paid", nil
	}),
		toolsafe.WithArgs(compiled([]byte(invoiceSchema))),
		toolsafe.WithRetry(policy.Retry{MaxRetries: 2, Backoff: policy.Backoff{Base: time.Millisecond, Max: time.Millisecond, Multiplier: 1}}))
	weather := toolsafe.Wrap(middleware.Func("weather", "Tells the weather of a city.", func(ctx context.Context, in string) (string, error) {
		if err := meet.arrive(ctx); err != nil {
			return "", err
		}
		return "sunny in " + in, nil
	}))

	model := toolsafetest.NewModel(
		toolsafetest.Calls(
			toolsafetest.ToolCall{ID: "call_1", Tool: "fetch_invoice", Arguments: `{"number":"INV-1"}`},
			toolsafetest.ToolCall{ID: "call_2", Tool: "weather", Arguments: `{"__arg1":"Oslo"}`},
			toolsafetest.ToolCall{ID: "call_3", Tool: "send_email", Arguments: `{"to":"x"}`}),
		toolsafetest.Answer("INV-1 is paid and Oslo is sunny."),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a sequential Dispatch would wait here
	defer cancel()
	got, err := loop(ctx, model, []tools.Tool{invoice, weather}, "INV-1, and the weather?")
	if err != nil {
		t.Fatal(err)
	}
	if got != "INV-1 is paid and Oslo is sunny." {
		t.Errorf("answer %q", got)
	}

	asked := model.Requests()
	if len(asked) != 2 || len(asked[0].Tools) != 2 {
		t.Fatalf("the model was asked %d times, offered %v", len(asked), asked[0].Tools)
	}
	if p := asked[0].Tools[0].Function.Parameters.(map[string]any); p["required"] == nil {
		t.Errorf("fetch_invoice was advertised with %v, not its schema", p)
	}

	second := asked[1].Messages
	if len(second) != 5 {
		t.Fatalf("the second request has %d messages; want the question, the calls and 3 responses: %+v", len(second), second)
	}
	if second[1].Role != llms.ChatMessageTypeAI || len(second[1].Parts) != 3 {
		t.Errorf("the calls message %+v", second[1])
	}
	var ids, contents []string
	for _, m := range second[2:] {
		if m.Role != llms.ChatMessageTypeTool || len(m.Parts) != 1 {
			t.Fatalf("response message %+v; want a tool message with one part", m)
		}
		r := m.Parts[0].(llms.ToolCallResponse)
		ids = append(ids, r.ToolCallID)
		contents = append(contents, r.Content)
	}
	if want := []string{"call_1", "call_2", "call_3"}; !slices.Equal(ids, want) {
		t.Errorf("responses for %v; want %v", ids, want)
	}
	if contents[0] != "paid" || contents[1] != "sunny in Oslo" {
		t.Errorf("responses %q", contents)
	}
	if want := "send_email is not a valid tool. Call one of these tools instead: fetch_invoice, weather."; contents[2] != want {
		t.Errorf("unknown tool's response %q; want %q", contents[2], want)
	}
	if n := invoiceCalls.Load(); n != 2 {
		t.Errorf("fetch_invoice ran %d attempts; want 2 (one retry)", n)
	}
	if want := []string{`{"number":"INV-1"}`, `{"number":"INV-1"}`}; !slices.Equal(inputs, want) {
		t.Errorf("fetch_invoice got %q; want the arguments verbatim on every attempt", inputs)
	}
}

func TestDispatchPausesAndCancellation(t *testing.T) {
	pending := approval.ApproverFunc(func(context.Context, approval.CallInfo) (approval.Decision, error) {
		return approval.Pending, nil
	})
	var refunds, lookups atomic.Int32
	refund := toolsafe.Wrap(middleware.Func("refund", "Refunds.", func(context.Context, string) (string, error) {
		refunds.Add(1)
		return "refunded", nil
	}), toolsafe.WithApproval(pending))
	lookup := toolsafe.Wrap(middleware.Func("lookup", "Looks up.", func(context.Context, string) (string, error) {
		lookups.Add(1)
		return "found", nil
	}))

	t.Run("a pause is returned as an error; the other calls of the turn still answer", func(t *testing.T) {
		calls := toolCalls("c1", "refund", `{"__arg1":"INV-1"}`, "c2", "lookup", `{"__arg1":"INV-1"}`, "c3", "refund", `{"__arg1":"INV-2"}`)
		resps, err := toolcall.Dispatch(context.Background(), []tools.Tool{refund, lookup}, calls)
		var ar *approval.Required
		if !errors.As(err, &ar) {
			t.Fatalf("error %v; want *approval.Required", err)
		}
		if ar.Tool != "refund" || ar.Input != "INV-1" {
			t.Errorf("the first pause is %+v; want refund of INV-1", ar)
		}
		if n := strings.Count(err.Error(), "needs approval"); n != 2 {
			t.Errorf("error %q names %d pauses; want both", err, n)
		}
		if len(resps) != 1 || resps[0].ToolCallID != "c2" || resps[0].Content != "found" {
			t.Errorf("responses %+v; want lookup's alone", resps)
		}
		if refunds.Load() != 0 || lookups.Load() != 1 {
			t.Errorf("refund ran %d times, lookup %d; want 0 and 1", refunds.Load(), lookups.Load())
		}
	})

	t.Run("the end of ctx is returned once, and no response", func(t *testing.T) {
		meet := newMeeting(3) // never met: the third call is not made
		waiting := make(chan struct{}, 2)
		slow := toolsafe.Wrap(middleware.Func("slow", "Waits.", func(ctx context.Context, _ string) (string, error) {
			waiting <- struct{}{}
			return "", meet.arrive(ctx)
		}))
		// The deadline is a backstop: the test cancels once both calls wait.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go func() {
			for range 2 {
				select {
				case <-waiting:
				case <-ctx.Done():
					return
				}
			}
			cancel()
		}()
		calls := toolCalls("c1", "slow", `{}`, "c2", "slow", `{}`)
		resps, err := toolcall.Dispatch(ctx, []tools.Tool{slow}, calls)
		if err != context.Canceled {
			t.Errorf("error %v; want context.Canceled itself", err)
		}
		if len(resps) != 0 {
			t.Errorf("responses %+v", resps)
		}
	})

	t.Run("a context that has ended runs nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := lookups.Load()
		_, err := toolcall.Dispatch(ctx, []tools.Tool{lookup}, toolCalls("c1", "lookup", `{}`))
		if !errors.Is(err, context.Canceled) || lookups.Load() != before {
			t.Errorf("error %v, lookup ran %d times", err, lookups.Load()-before)
		}
	})
}

func TestDispatchInputs(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	record := func(name string) func(context.Context, string) (string, error) {
		return func(_ context.Context, in string) (string, error) {
			mu.Lock()
			got[name] = in
			mu.Unlock()
			return "ok", nil
		}
	}
	withSchema := toolsafe.Wrap(middleware.Func("Search", "Searches.", record("Search")),
		toolsafe.WithArgs(compiled([]byte(`{"type":"object","properties":{"__arg1":{"type":"string"}}}`))))
	noArgs := toolsafe.Wrap(middleware.Func("now", "The time.", record("now")), toolsafe.WithArgs(compiled([]byte(`{"type":"object"}`))))
	free := middleware.Func("calc", "Evaluates.", record("calc"))
	freeJSON := middleware.Func("echo", "Echoes.", record("echo"))

	calls := toolCalls(
		"c1", "search", `{"__arg1":"kept as JSON"}`, // the name ignoring case; a schema tool gets the JSON
		"c2", "now", ``,
		"c3", "calc", `{"__arg1":"2+2"}`,
		"c4", "echo", `not json`,
	)
	calls = append(calls, llms.ToolCall{ID: "c5", Type: "function"}, llms.ToolCall{ID: "c6", Type: "retrieval", FunctionCall: &llms.FunctionCall{Name: "calc"}})
	resps, err := toolcall.Dispatch(context.Background(), []tools.Tool{withSchema, noArgs, free, freeJSON}, calls)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Search": `{"__arg1":"kept as JSON"}`, "now": "{}", "calc": "2+2", "echo": "not json"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s got %q; want %q", k, got[k], v)
		}
	}
	if len(resps) != 6 {
		t.Fatalf("%d responses; want 6", len(resps))
	}
	for _, i := range []int{4, 5} {
		if c := resps[i].Content; !strings.Contains(c, "names no function") || !strings.Contains(c, "Search, now, calc, echo") {
			t.Errorf("response %d: %q", i, c)
		}
	}
	if resps[0].Name != "search" {
		t.Errorf("the response names %q; want the name the model used", resps[0].Name)
	}
}

// The model's call IDs reach the tools' results, with calls of the same
// tool and input running at once.
func TestDispatchCallIDs(t *testing.T) {
	ids := toolsafe.NewCallIDs()
	var mu sync.Mutex
	var seen []string
	meet := newMeeting(3)
	tool := toolsafe.Wrap(middleware.Func("lookup", "Looks up.", func(ctx context.Context, _ string) (string, error) {
		return "found", meet.arrive(ctx)
	}), toolsafe.WithCallIDs(ids), toolsafe.WithOnResult(func(_ context.Context, r middleware.Result) {
		mu.Lock()
		seen = append(seen, r.CallID)
		mu.Unlock()
	}))
	calls := toolCalls("call_a", "lookup", `{}`, "call_b", "lookup", `{}`, "call_c", "lookup", `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := toolcall.Dispatch(ctx, []tools.Tool{tool}, calls, toolcall.WithCallIDs(ids)); err != nil {
		t.Fatal(err)
	}
	slices.Sort(seen)
	if want := []string{"call_a", "call_b", "call_c"}; !slices.Equal(seen, want) {
		t.Errorf("call IDs %v; want %v", seen, want)
	}
}

func TestDispatchRefusesAndRaises(t *testing.T) {
	ok := middleware.Func("ok", "Answers.", func(context.Context, string) (string, error) { return "", nil })
	if _, err := toolcall.Dispatch(context.Background(), []tools.Tool{ok, nil}, nil); err == nil || !strings.Contains(err.Error(), "tool 2 of 2 is nil") {
		t.Errorf("a nil tool: %v", err)
	}
	if _, err := toolcall.Dispatch(context.Background(), []tools.Tool{ok, middleware.Func("OK", "", nil)}, nil); err == nil || !strings.Contains(err.Error(), "differ only in case") {
		t.Errorf("names equal but for case: %v", err)
	}
	var nilCtx context.Context
	if _, err := toolcall.Dispatch(nilCtx, []tools.Tool{ok}, nil); err == nil {
		t.Error("a nil context: no error")
	}

	t.Run("a bare tool's error is returned, as the executor would", func(t *testing.T) {
		boom := middleware.Func("boom", "Fails.", func(context.Context, string) (string, error) { return "", errors.New("boom") })
		resps, err := toolcall.Dispatch(context.Background(), []tools.Tool{boom, ok}, toolCalls("c1", "boom", `{}`, "c2", "ok", `{}`))
		if err == nil || err.Error() != "boom" || len(resps) != 1 || resps[0].ToolCallID != "c2" {
			t.Errorf("error %v, responses %+v", err, resps)
		}
	})
	t.Run("a bare tool's panic is raised on the caller's goroutine", func(t *testing.T) {
		bad := middleware.Func("bad", "Panics.", func(context.Context, string) (string, error) { panic("bad tool") })
		defer func() {
			if v := recover(); v != "bad tool" {
				t.Errorf("recovered %v; want the tool's panic", v)
			}
		}()
		_, _ = toolcall.Dispatch(context.Background(), []tools.Tool{bad, ok}, toolCalls("c1", "bad", `{}`, "c2", "ok", `{}`))
		t.Error("Dispatch returned")
	})
}

func ExampleDispatch() {
	weather := middleware.Func("weather", "Tells the weather of a city.", func(_ context.Context, city string) (string, error) {
		return "sunny in " + city, nil
	})
	ts := []tools.Tool{toolsafe.Wrap(weather)}
	calls := []llms.ToolCall{
		{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"__arg1":"Oslo"}`}},
		{ID: "call_2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "forecast", Arguments: `{}`}},
	}
	resps, err := toolcall.Dispatch(context.Background(), ts, calls)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range resps {
		fmt.Printf("%s: %s\n", r.ToolCallID, r.Content)
	}
	// Output:
	// call_1: sunny in Oslo
	// call_2: forecast is not a valid tool. Call one of these tools instead: weather.
}

func ExampleDefinitions() {
	search := toolsafe.Wrap(
		middleware.Func("search", "Searches the invoices.", func(_ context.Context, in string) (string, error) { return in, nil }),
		toolsafe.WithArgs(compiled([]byte(`{"type":"object","required":["query"],"properties":{"query":{"type":"string"}}}`))),
	)
	defs, err := toolcall.Definitions(search)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(defs[0].Function.Name, defs[0].Function.Parameters)
	// Output: search map[properties:map[query:map[type:string]] required:[query] type:object]
}
