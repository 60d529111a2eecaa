package main

import (
	"context"
	"errors"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// scriptedModel is an llms.Model that answers each GenerateContent with the
// next of its turns, as an OpenAI model calling functions would: no
// network, no API key, the same story every run.
type scriptedModel struct {
	mu    sync.Mutex
	turns []*llms.ContentResponse
}

func (m *scriptedModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.turns) == 0 {
		return nil, errors.New("the script has no more turns")
	}
	r := m.turns[0]
	m.turns = m.turns[1:]
	return r, nil
}

func (m *scriptedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// toolCall is a model turn that calls one tool.
func toolCall(id, name, arguments string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{{
		ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: arguments},
	}}}}}
}

func finalAnswer(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text}}}
}
