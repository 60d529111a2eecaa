package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

const (
	refundInput = `{"order":"A-1001","amount_eur":25}`
	finalAnswer = "INV-1001 (Acme Corp, 1250.00 EUR) is paid and INV-1002 (Globex, 980.50 EUR) is overdue. " +
		"The refund of 25 EUR for order A-1001 was approved and applied once."
)

// script is what the scripted model answers, turn by turn: each turn's
// calls are made at once, and Eino's ToolsNode runs them in parallel.
var script = []*schema.Message{
	schema.AssistantMessage("", []schema.ToolCall{
		call("call_1", "fetch_invoice", `{"number":"INV-1001"}`),
		call("call_2", "fetch_invoice", `{"number":"1002"}`),
	}),
	schema.AssistantMessage("", []schema.ToolCall{
		call("call_3", "fetch_invoice", `{"number":"INV-1002"}`),
		call("call_4", "refund", refundInput),
	}),
	schema.AssistantMessage(finalAnswer, nil),
}

func call(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// scripted is a model.ToolCallingChatModel that answers from script, turn
// by turn, whatever it is sent: the demo runs offline. It is safe for
// concurrent use.
type scripted struct {
	mu    sync.Mutex
	turns []*schema.Message
}

func (m *scripted) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.turns) == 0 {
		return nil, errors.New("the scripted model has no turn left")
	}
	next := m.turns[0]
	m.turns = m.turns[1:]
	return next, nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// chatModel returns the scripted model, or OpenAI's (eino-ext) when
// OPENAI_API_KEY is set; OPENAI_MODEL picks the model (gpt-4o-mini by
// default), OPENAI_BASE_URL another endpoint that speaks OpenAI's API.
func chatModel(ctx context.Context) (model.ToolCallingChatModel, string, bool, error) {
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		return &scripted{turns: script}, "scripted (set OPENAI_API_KEY to use OpenAI)", true, nil
	}
	name := os.Getenv("OPENAI_MODEL")
	if name == "" {
		name = "gpt-4o-mini"
	}
	m, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{APIKey: key, Model: name, BaseURL: os.Getenv("OPENAI_BASE_URL")})
	if err != nil {
		return nil, "", false, fmt.Errorf("OPENAI_API_KEY is set but the OpenAI model could not start: %w", err)
	}
	return m, "OpenAI " + name + " (eino-ext)", false, nil
}

// announcing prints the calls of each turn of its model as the model makes
// them, before Eino's ToolsNode runs them: the agent's events come
// asynchronously, so a call's result could be printed before the turn
// that made it. The demo does not stream: Stream is the model's own.
type announcing struct {
	model.ToolCallingChatModel
	w io.Writer
}

func (a announcing) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	msg, err := a.ToolCallingChatModel.Generate(ctx, in, opts...)
	if err == nil && msg != nil && len(msg.ToolCalls) > 0 {
		var b strings.Builder // one Write, so that no line of a call's comes between
		b.WriteString("\nthe model calls, at once:\n")
		for _, c := range msg.ToolCalls {
			fmt.Fprintf(&b, "    %s %s (call %s)\n", c.Function.Name, c.Function.Arguments, c.ID)
		}
		_, _ = io.WriteString(a.w, b.String())
	}
	return msg, err
}

func (a announcing) WithTools(ts []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m, err := a.ToolCallingChatModel.WithTools(ts)
	if err != nil {
		return nil, err
	}
	return announcing{m, a.w}, nil
}
