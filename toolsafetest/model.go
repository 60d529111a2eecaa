package toolsafetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// ToolCall is one tool call in a scripted Turn of a Model.
type ToolCall struct {
	// Tool is the name of the tool to call, as its Name() returns it (the
	// executor looks tools up case-insensitively).
	Tool string
	// Arguments is the tool's input, exactly as Tool.Call is to receive it,
	// such as `{"number":"INV-1001"}`. The Model sends it wrapped the way
	// the OpenAI-functions agent asks for it, or as it is to a program's
	// own loop that offers tools (see Model).
	Arguments string
	// ID is the model's tool-call ID (llms.ToolCall.ID), such as
	// "call_A1": the agent puts it in schema.AgentAction.ToolID, and
	// toolsafe.CallIDs hands it to the wrapped tool. Empty means NewModel
	// makes one up: "call_" and the number of the call in the script,
	// counting from 1 over every turn ("call_1", "call_2", ...).
	ID string
}

// Turn is one answer of a Model to the agent: the tools it calls, or,
// when it calls none, its final answer.
type Turn struct {
	// Calls are the tool calls of the turn, in the order the executor
	// makes them. None means the turn is the final answer.
	Calls []ToolCall
	// Text is the final answer when there are no calls. Alongside calls it
	// is what the model says with them, which the agent logs as
	// "responded: ...". Empty is allowed in both cases.
	Text string
	// Err, when not nil, is returned by GenerateContent for this turn
	// instead of an answer, as by a model that is down or rate limited;
	// the executor ends the run with it.
	Err error
}

// Calls returns the turn that makes calls, in order, and says nothing
// else.
func Calls(calls ...ToolCall) Turn { return Turn{Calls: calls} }

// Answer returns the turn that ends the run with text as its final answer
// (the executor's "output").
func Answer(text string) Turn { return Turn{Text: text} }

// Request is what a Model was asked once: the messages the agent sent,
// with the observations of earlier tool calls, and the tools it offered.
type Request struct {
	// Messages are the messages of the request, in order: the system
	// prompt, the user's input, then for each earlier tool call an AI
	// message with the call (an llms.ToolCall whose arguments are the
	// tool's input, unwrapped) and a tool message with its answer (an
	// llms.ToolCallResponse). langchaingo v0.1.14 sends each call of a turn
	// in an AI message of its own.
	Messages []llms.MessageContent
	// Functions are the tools the agent offered (llms.WithFunctions): for
	// the OpenAI-functions agent, every tool with the one string parameter
	// __arg1.
	Functions []llms.FunctionDefinition
	// Tools are the tools offered with llms.WithTools, as a program's own
	// agent loop offers toolcall.Definitions.
	Tools []llms.Tool
}

// Model is an llms.Model that answers with scripted turns, for an agent made
// by agents.NewOpenAIFunctionsAgent with a real executor: each GenerateContent
// answers with the next Turn, tool calls with their IDs or a final answer. It
// wraps each ToolCall's Arguments in the agent's one "__arg1" parameter, as a
// real model would (as they are for a request that offers tools, not
// functions), and records every request (Requests, Observations). Safe for
// concurrent use: concurrent requests take turns in the order they arrive.
// When the script is used up, GenerateContent returns an error.
type Model struct {
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
}

var _ llms.Model = (*Model)(nil)

// NewModel returns a Model that answers with turns, in order, one per
// request, and fills in the IDs left empty (see ToolCall.ID).
func NewModel(turns ...Turn) *Model {
	m := &Model{turns: make([]Turn, len(turns))}
	n := 0
	for i, t := range turns {
		t.Calls = slices.Clone(t.Calls)
		for j := range t.Calls {
			n++
			if t.Calls[j].ID == "" {
				t.Calls[j].ID = fmt.Sprintf("call_%d", n)
			}
		}
		m.turns[i] = t
	}
	return m
}

// GenerateContent records the request, then answers with the next turn of
// the script: its tool calls (type "function", the arguments wrapped in
// {"__arg1": ...} unless the request offers only tools; see Model) and
// text, or its Err. It returns ctx.Err(), using no
// turn, when ctx has ended, and an error when the script has no turn left.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	req := Request{Messages: make([]llms.MessageContent, len(messages)),
		Functions: slices.Clone(opts.Functions), Tools: slices.Clone(opts.Tools)}
	for i, msg := range messages {
		req.Messages[i] = llms.MessageContent{Role: msg.Role, Parts: slices.Clone(msg.Parts)}
	}

	m.mu.Lock()
	m.requests = append(m.requests, req)
	if err := ctx.Err(); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if m.next == len(m.turns) {
		n := len(m.turns)
		m.mu.Unlock()
		return nil, fmt.Errorf("toolsafetest: the model was asked again, but its script of %d turns is used up", n)
	}
	t := m.turns[m.next]
	m.next++
	m.mu.Unlock()

	if t.Err != nil {
		return nil, t.Err
	}
	asIs := len(opts.Tools) > 0 && len(opts.Functions) == 0
	choice := &llms.ContentChoice{Content: t.Text}
	for _, c := range t.Calls {
		args := c.Arguments
		if !asIs {
			args = wrapArg1(args)
		}
		choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{
			ID:           c.ID,
			Type:         "function",
			FunctionCall: &llms.FunctionCall{Name: c.Tool, Arguments: args},
		})
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// Call answers a single prompt with the next turn's text (see
// GenerateContent), as llms.GenerateFromSinglePrompt does.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// Requests returns a copy of every request the Model was asked, in the
// order they arrived, those it could not answer included.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Observations returns the tools' answers the Model was shown in its most
// recent request, in order: the tool messages' llms.ToolCallResponse parts,
// each with the ID of the call it answers (ToolCallID) and the observation
// the executor got from the tool (Content). The agent sends the whole run
// so far with every request, so after a run they are all its observations.
// It returns nil before the first request.
func (m *Model) Observations() []llms.ToolCallResponse {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	var obs []llms.ToolCallResponse
	for _, msg := range m.requests[len(m.requests)-1].Messages {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				obs = append(obs, r)
			}
		}
	}
	return obs
}

// Left returns the number of turns of the script not yet answered: 0 once
// the run used them all.
func (m *Model) Left() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

// wrapArg1 encodes a tool's input the way the OpenAI-functions agent
// advertises its tools: an object with the one string parameter __arg1.
func wrapArg1(input string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"__arg1": input}) // a map of strings always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
