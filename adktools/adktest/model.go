// Package adktest is a scripted ADK model (model.LLM) for tests and
// offline demos of ADK agents whose tools toolsafe wraps: it answers from
// a script, turn by turn, and keeps what the tools answered.
package adktest

import (
	"context"
	"errors"
	"iter"
	"sync"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// Call is one function call the model makes: its ID (the model's
// tool-call ID), the tool's name and the arguments.
type Call struct {
	ID, Name string
	Args     map[string]any
}

// Turn is one answer of the model: function calls, or else text.
type Turn struct {
	Calls []Call
	Text  string
}

// Calls is a turn that makes the calls, at once (ADK runs them in parallel).
func Calls(calls ...Call) Turn { return Turn{Calls: calls} }

// Answer is a turn that answers with text, which ends ADK's agent loop.
func Answer(text string) Turn { return Turn{Text: text} }

// ErrScriptDone is what the model answers once its script has run out.
var ErrScriptDone = errors.New("adktest: the model's script ran out")

// Model is a model.LLM that answers from a script. It is safe for
// concurrent use; the zero Model has no script.
type Model struct {
	mu    sync.Mutex
	turns []Turn
	reqs  []*model.LLMRequest
}

var _ model.LLM = (*Model)(nil)

// NewModel returns a Model that answers turns, in order.
func NewModel(turns ...Turn) *Model { return &Model{turns: turns} }

// Name returns "adktest".
func (m *Model) Name() string { return "adktest" }

// GenerateContent answers req with the next turn of the script, or with
// ErrScriptDone; stream is ignored.
func (m *Model) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		if len(m.turns) == 0 {
			m.mu.Unlock()
			yield(nil, ErrScriptDone)
			return
		}
		turn := m.turns[0]
		m.turns = m.turns[1:]
		m.mu.Unlock()
		c := &genai.Content{Role: genai.RoleModel}
		for _, call := range turn.Calls {
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: call.ID, Name: call.Name, Args: call.Args}})
		}
		if len(c.Parts) == 0 {
			c.Parts = []*genai.Part{{Text: turn.Text}}
		}
		yield(&model.LLMResponse{Content: c, TurnComplete: true}, nil)
	}
}

// Response returns what the model was last sent as the answer to the call
// id (ADK's function response: the tool's result map, or {"error": ...}),
// and whether it was sent one.
func (m *Model) Response(id string) (map[string]any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.reqs) - 1; i >= 0; i-- {
		for _, c := range m.reqs[i].Contents {
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil && fr.ID == id {
					return fr.Response, true
				}
			}
		}
	}
	return nil, false
}

// Left returns the number of turns not answered yet.
func (m *Model) Left() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns)
}
