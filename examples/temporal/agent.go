package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsafe/toolsafe/temporaltools"
)

// The names the worker registers the workflow and the model under.
const (
	agentWorkflow = "billing_agent"
	modelActivity = "model"
)

// Message is one entry of the agent's conversation, as the workflow keeps
// it in its history.
type Message struct {
	Role    string     `json:"role"` // "user", "assistant" or "tool"
	Content string     `json:"content,omitempty"`
	Calls   []ToolCall `json:"calls,omitempty"` // the assistant's tool calls
	// A tool message answers the call CallID of Tool; Status, Kind,
	// Attempts and ApprovedBy say how the call went.
	CallID     string `json:"call_id,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Status     string `json:"status,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Attempts   int    `json:"attempts,omitempty"`
	ApprovedBy string `json:"approved_by,omitempty"`
}

// ToolCall is one tool call of the model.
type ToolCall struct {
	ID    string `json:"id"`
	Tool  string `json:"tool"`
	Input string `json:"input"`
}

// Turn is the model's answer to the conversation: tool calls, or a final
// answer.
type Turn struct {
	Calls  []ToolCall `json:"calls,omitempty"`
	Answer string     `json:"answer,omitempty"`
}

// maxTurns bounds the model's turns in one run.
const maxTurns = 8

// Agent is the agent loop as a Temporal workflow: it asks the model (an
// activity) for its next turn, calls the tools it names through a
// temporaltools.Run (each call an activity, its failures in toolsafe's
// words, a refund waiting for a person's decision as long as it takes), and
// hands each observation back, until the model answers. It returns the
// conversation.
func Agent(ctx workflow.Context, question string) ([]Message, error) {
	run, err := temporaltools.NewRun(ctx, temporaltools.RunOptions{
		Activity: workflow.ActivityOptions{
			// Longer than the tools' attempt timeouts (2s, 3s): past it
			// the worker is gone, and Temporal gives the attempt to another.
			StartToCloseTimeout: 5 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumAttempts: 4,
			},
		},
		Tools: []string{"fetch_invoice", "refund"},
	})
	if err != nil {
		return nil, err
	}
	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	msgs := []Message{{Role: "user", Content: question}}
	for range maxTurns {
		var turn Turn
		if err := workflow.ExecuteActivity(mctx, modelActivity, msgs).Get(ctx, &turn); err != nil {
			return msgs, err
		}
		msgs = append(msgs, Message{Role: "assistant", Content: turn.Answer, Calls: turn.Calls})
		if len(turn.Calls) == 0 {
			return msgs, nil
		}
		for _, c := range turn.Calls {
			res, err := run.Call(ctx, c.Tool, c.Input, c.ID)
			if err != nil {
				return msgs, err
			}
			m := Message{Role: "tool", CallID: res.CallID, Tool: res.Tool, Content: res.Observation,
				Status: res.Status(), Kind: string(res.Kind), Attempts: res.Attempts}
			if res.Approval != nil {
				m.ApprovedBy = res.Approval.By
			}
			msgs = append(msgs, m)
		}
	}
	return msgs, fmt.Errorf("the model did not answer in %d turns", maxTurns)
}

// model is the model activity: the scripted model, or a real one.
type model struct {
	llm   llms.Model // nil: scripted
	tools []llms.Tool
}

// Next is the model's next turn for the conversation msgs.
func (m *model) Next(ctx context.Context, msgs []Message) (Turn, error) {
	if m.llm == nil {
		return scripted(msgs), nil
	}
	content := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem,
		"You answer billing questions with the tools. Refunds need a person's approval; the tool waits for it.")}
	for _, msg := range msgs {
		switch msg.Role {
		case "user":
			content = append(content, llms.TextParts(llms.ChatMessageTypeHuman, msg.Content))
		case "assistant":
			mc := llms.MessageContent{Role: llms.ChatMessageTypeAI}
			if msg.Content != "" {
				mc.Parts = append(mc.Parts, llms.TextContent{Text: msg.Content})
			}
			for _, c := range msg.Calls {
				mc.Parts = append(mc.Parts, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Tool, Arguments: c.Input}})
			}
			content = append(content, mc)
		case "tool":
			content = append(content, llms.MessageContent{Role: llms.ChatMessageTypeTool,
				Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: msg.CallID, Name: msg.Tool, Content: msg.Content}}})
		}
	}
	resp, err := m.llm.GenerateContent(ctx, content, llms.WithTools(m.tools))
	if err != nil {
		return Turn{}, err
	}
	if len(resp.Choices) == 0 {
		return Turn{}, fmt.Errorf("the model answered no choice")
	}
	ch := resp.Choices[0]
	var t Turn
	for _, c := range ch.ToolCalls {
		if c.FunctionCall != nil {
			t.Calls = append(t.Calls, ToolCall{ID: c.ID, Tool: c.FunctionCall.Name, Input: c.FunctionCall.Arguments})
		}
	}
	if len(t.Calls) == 0 {
		t.Answer = ch.Content
	}
	return t, nil
}

// scripted is the scripted model: it reads two invoices (one by a number
// that is not one), asks for a refund, then answers from what the tools
// said. Its turn depends on the conversation only, so a worker that takes
// over answers as the one that died would have.
func scripted(msgs []Message) Turn {
	var turns int
	obs := map[string]string{}
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			turns++
		case "tool":
			obs[m.CallID] = m.Content
		}
	}
	switch turns {
	case 0:
		return Turn{Calls: []ToolCall{
			{ID: "call_1", Tool: "fetch_invoice", Input: `{"number":"INV-1001"}`},
			{ID: "call_2", Tool: "fetch_invoice", Input: `{"number":"7"}`},
		}}
	case 1:
		return Turn{Calls: []ToolCall{{ID: "call_3", Tool: "refund", Input: `{"order":"A-1001","amount_eur":25}`}}}
	}
	var inv struct {
		Customer string  `json:"customer"`
		Amount   float64 `json:"amount_eur"`
		Status   string  `json:"status"`
	}
	var ref struct {
		Refund string `json:"refund"`
	}
	var b strings.Builder
	if json.Unmarshal([]byte(obs["call_1"]), &inv) == nil && inv.Status != "" {
		fmt.Fprintf(&b, "INV-1001 (%s, %.2f EUR) is %s. ", inv.Customer, inv.Amount, inv.Status)
	} else {
		fmt.Fprintf(&b, "INV-1001 could not be read: %s ", obs["call_1"])
	}
	b.WriteString(`"7" is not an invoice number; please give the full number, such as INV-1002. `)
	if json.Unmarshal([]byte(obs["call_3"]), &ref) == nil && ref.Refund != "" {
		fmt.Fprintf(&b, "The refund of 25 EUR for order A-1001 is %s.", ref.Refund)
	} else {
		fmt.Fprintf(&b, "The refund was not made: %s", obs["call_3"])
	}
	return Turn{Answer: b.String()}
}
