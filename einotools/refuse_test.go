package einotools_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolsafe/toolsafe/einotools"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/policyfile"
	"github.com/toolsafe/toolsafe/toolsafetest"
)

// multimodal is an enhanced Eino tool: its results are not text.
type multimodal struct{}

func (multimodal) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "draw", Desc: "draws a chart"}, nil
}

func (multimodal) InvokableRun(context.Context, *schema.ToolArgument, ...tool.Option) (*schema.ToolResult, error) {
	return &schema.ToolResult{}, nil
}

// chunks is a streaming Eino tool that fails once with a transient error,
// then streams its answer in three chunks.
type chunks struct{ runs atomic.Int32 }

func (*chunks) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "report", Desc: "writes a report"}, nil
}

func (c *chunks) StreamableRun(context.Context, string, ...tool.Option) (*schema.StreamReader[string], error) {
	if c.runs.Add(1) == 1 {
		return nil, middleware.Transient(errors.New("report service busy"))
	}
	return schema.StreamReaderFromArray([]string{"all ", "systems ", "go"}), nil
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	policies, err := policyfile.Parse([]byte("version: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("an enhanced tool is refused at wrap time", func(t *testing.T) {
		if _, err := einotools.New(ctx, multimodal{}); !errors.Is(err, einotools.ErrUnsupported) {
			t.Errorf("New: %v, want ErrUnsupported", err)
		}
		if _, err := einotools.Middleware(ctx, policies, []tool.BaseTool{multimodal{}}); !errors.Is(err, einotools.ErrUnsupported) {
			t.Errorf("Middleware: %v, want ErrUnsupported", err)
		}
	})
	t.Run("a guarded tool is not guarded twice", func(t *testing.T) {
		once, err := einotools.New(ctx, &chunks{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := einotools.New(ctx, once); err == nil || !strings.Contains(err.Error(), "guarded already") {
			t.Errorf("New: %v, want a refusal", err)
		}
	})
	t.Run("a tool the middleware was not given ends the run instead of running unguarded", func(t *testing.T) {
		mw, err := einotools.Middleware(ctx, policies, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &chunks{}
		llm := script(calls(toolCall("call_1", "report", `{}`)), answer("done"))
		o := drive(runner(t, llm, newStore(), []tool.BaseTool{s}, mw).Query(ctx, "report"))
		if o.err == nil || !strings.Contains(o.err.Error(), "was not given to einotools.Middleware") {
			t.Errorf("the run ended with %v, want the refusal", o.err)
		}
		if s.runs.Load() != 0 {
			t.Errorf("the tool ran %d times", s.runs.Load())
		}
	})
}

func TestStreamingToolIsGuarded(t *testing.T) {
	ctx := context.Background()
	f, err := policyfile.Parse([]byte("version: 1\ntools:\n  report:\n    retries: 2\n    backoff: {base: 1ms, max: 1ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"New", "Middleware"} {
		t.Run("through "+how, func(t *testing.T) {
			s := &chunks{}
			ts := []tool.BaseTool{s}
			if how == "New" {
				w, err := einotools.New(ctx, s, retryPolicy(2))
				if err != nil {
					t.Fatal(err)
				}
				ts = []tool.BaseTool{w}
			}
			llm := script(calls(toolCall("call_1", "report", `{}`)), answer("done"))
			r := runner(t, llm, newStore(), ts)
			if how == "Middleware" {
				mw, err := einotools.Middleware(ctx, f, ts)
				if err != nil {
					t.Fatal(err)
				}
				r = runner(t, llm, newStore(), ts, mw)
			}
			o := drive(r.Query(ctx, "report"))
			if o.err != nil {
				t.Fatalf("the run ended with %v", o.err)
			}
			if got := llm.observations()["call_1"]; got != "all systems go" || s.runs.Load() != 2 {
				t.Errorf("the model saw %q after %d runs, want the whole stream after 2", got, s.runs.Load())
			}
		})
	}
}

func TestArgumentsAreCheckedAgainstInfo(t *testing.T) {
	up := toolsafetest.NewUpstream(invoices())
	defer up.Close()
	fetch, err := einotools.New(context.Background(), fetchInvoice(t, up.URL(), nil))
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "fetch_invoice", `{"number":1001}`)), answer("done"))
	o := drive(runner(t, llm, newStore(), []tool.BaseTool{fetch}).Query(context.Background(), "status?"))
	if o.err != nil {
		t.Fatalf("the run ended with %v", o.err)
	}
	if seen := llm.observations()["call_1"]; !strings.Contains(seen, "number") || up.Requests("") != 0 {
		t.Errorf("the model saw %q and the upstream got %d requests: want an argument problem about number, no request", seen, up.Requests(""))
	}
}

// With the runner streaming, the ToolsNode runs each call through its
// stream path: the guards hold there too, for a wrapped tool and for a
// streaming tool under Middleware.
func TestStreamingRunnerIsGuarded(t *testing.T) {
	ctx := context.Background()
	f, err := policyfile.Parse([]byte("version: 1\ntools:\n  report:\n    retries: 2\n    backoff: {base: 1ms, max: 1ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := &chunks{}
	ts := []tool.BaseTool{s}
	mw, err := einotools.Middleware(ctx, f, ts)
	if err != nil {
		t.Fatal(err)
	}
	llm := script(calls(toolCall("call_1", "report", `{}`)), answer("done"))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "answers with tools", Model: llm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: ts, ToolCallMiddlewares: []compose.ToolMiddleware{mw}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: true})
	o := drive(r.Query(ctx, "report"))
	if o.err != nil {
		t.Fatalf("the run ended with %v", o.err)
	}
	if got := llm.observations()["call_1"]; got != "all systems go" || s.runs.Load() != 2 {
		t.Errorf("the model saw %q after %d runs, want the whole stream after 2", got, s.runs.Load())
	}
}
