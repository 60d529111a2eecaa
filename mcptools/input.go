package mcptools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/middleware"
	"github.com/toolsafe/toolsafe/run"
)

// WithInputApprover puts the server's input requests to a person through
// a, the program's approver (such as the approval.Grants its approvals
// inbox serves): a question the server asks during a call (an
// InputRequiredResult of the 2026-07-28 protocol) that approving or denying
// answers (a form elicitation that asks for nothing, or for one yes/no
// field) pauses the call with an *approval.Required, and the inbox shows
// it as a request of the tool "NAME (input requested)", whose input holds
// the call's arguments, the server's question and the answer approving
// sends. Approved, the call is sent again with the answer (accept, the
// field true); denied, with a decline, and the server's reply is the
// call's. A resumed run (run.Resume) asks the server again, and the
// server's question, asked again, finds the decision. A pause is never
// retried or routed to a fallback; nothing was applied, since the server
// waits for the answer.
//
// The client must hand input requests to mcptools: make it with
// &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled:
// true}}; the SDK's own multi round-trip answers them through the client's
// handlers instead. A question approving cannot answer (a form with other
// fields, a URL, sampling), and any question without WithInputApprover,
// tells the model the tool needs a person's input instead, never a
// failure to retry. Nil, the default, asks nobody.
func WithInputApprover(a approval.Approver) Option {
	return optionFunc(func(c *config) { c.inputApprover = a })
}

// inputRequested ends the tool name of an input request put to a person:
// "NAME (input requested)". No tool of mcptools has a name that ends so.
const inputRequested = " (input requested)"

// maxInputRounds is the most questions one call puts to a person before
// the model is told the tool needs more input than this client collects.
const maxInputRounds = 3

// question is an input request a person answers by approving or denying.
type question struct {
	id  string
	ask *mcp.ElicitParams
	yes map[string]any // the content approving sends
}

// questionOf returns the one request of reqs that approving or denying
// answers: a form elicitation asking for nothing, or for one boolean.
func questionOf(reqs mcp.InputRequestMap) (question, bool) {
	if len(reqs) != 1 {
		return question{}, false
	}
	for id, r := range reqs {
		ask, ok := r.(*mcp.ElicitParams)
		if !ok || ask == nil || ask.Mode != "" && ask.Mode != "form" || ask.URL != "" {
			return question{}, false
		}
		yes := map[string]any{}
		if ask.RequestedSchema != nil {
			b, err := json.Marshal(ask.RequestedSchema)
			if err != nil {
				return question{}, false
			}
			var schema struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			}
			if json.Unmarshal(b, &schema) != nil || len(schema.Properties) > 1 {
				return question{}, false
			}
			for name, p := range schema.Properties {
				if p.Type != "boolean" {
					return question{}, false
				}
				yes[name] = true
			}
		}
		return question{id: id, ask: ask, yes: yes}, true
	}
	return question{}, false
}

// askPerson puts the question of res, the server's answer to params, to
// the input approver, and sends params again with the answer; it returns
// the final result, or a pause.
func (t *Tool) askPerson(ctx context.Context, session *mcp.ClientSession, params *mcp.CallToolParams, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	for round := 0; res.NeedsInput(); round++ {
		q, ok := questionOf(res.InputRequests)
		if !ok || round == maxInputRounds {
			return nil, t.needsInput()
		}
		info, err := t.inputRequest(ctx, params, q)
		if err != nil {
			return nil, t.needsInput()
		}
		d, err := decide(ctx, t.inputApprover, info)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		answer := &mcp.ElicitResult{Action: "decline"}
		switch {
		case err != nil || d == approval.Pending:
			return nil, &approval.Required{
				Tool: info.Tool, CallID: info.CallID, Input: info.Input, Attempt: info.Attempt,
				IdempotencyKey: info.IdempotencyKey, RunID: info.RunID, Err: err,
				Reason: "its MCP server asks a question before it goes on; approving answers yes, denying no (the input shows the question)",
			}
		case d == approval.Approved:
			answer = &mcp.ElicitResult{Action: "accept", Content: q.yes}
		}
		again := *params
		again.InputResponses = mcp.InputResponseMap{q.id: answer}
		again.RequestState = res.RequestState
		if res, err = session.CallTool(ctx, &again); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// inputRequest is the request the person is asked about for q: the tool
// "NAME (input requested)", with the call's arguments, the server's
// question and the answer approving sends as its input.
func (t *Tool) inputRequest(ctx context.Context, params *mcp.CallToolParams, q question) (approval.CallInfo, error) {
	b, err := json.Marshal(struct {
		Arguments json.RawMessage `json:"arguments"`
		Question  string          `json:"question"`
		Approving map[string]any  `json:"approving_answers"`
	}{params.Arguments.(json.RawMessage), q.ask.Message, q.yes})
	if err != nil {
		return approval.CallInfo{}, err
	}
	canon, err := canonical.JSON(string(b))
	if err != nil {
		return approval.CallInfo{}, err
	}
	return approval.CallInfo{
		Tool:           t.name + inputRequested,
		CallID:         middleware.CallID(ctx),
		Input:          string(b),
		Attempt:        max(middleware.AttemptNumber(ctx), 1),
		IdempotencyKey: middleware.IdempotencyKey(ctx),
		RunID:          run.ID(ctx),
		CanonicalInput: canon,
		CallIDKnown:    middleware.CallIDKnown(ctx),
	}, nil
}

// decide asks a about info; a panic is an error, so the call pauses.
func decide(ctx context.Context, a approval.Approver, info approval.CallInfo) (d approval.Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = approval.Pending, fmt.Errorf("mcptools: the input approver panicked: %v", r)
		}
	}()
	return a.Decide(ctx, info)
}
