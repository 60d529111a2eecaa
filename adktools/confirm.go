package adktools

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/canonical"
	"github.com/toolsafe/toolsafe/run"
)

// Confirmations returns the Approver of toolsafe.WithApproval for ADK: a
// call resumed with ADK's tool confirmation is Approved when the user
// confirmed it and Denied when they rejected it, once (one attempt, for a
// destructive tool); any other call is asked of next (nil: Pending, so the
// call pauses and ADK asks the user). Safe for concurrent use when next is.
func Confirmations(next approval.Approver) approval.Approver {
	return approval.ApproverFunc(func(ctx context.Context, call approval.CallInfo) (approval.Decision, error) {
		if c, _ := ctx.Value(confirmationKey{}).(*confirmation); c.takeFor(call) {
			if c.confirmed {
				return approval.Approved, nil
			}
			return approval.Denied, nil
		}
		if next == nil {
			return approval.Pending, nil
		}
		return next.Decide(ctx, call)
	})
}

// confirmation is the user's answer to one paused call, as ADK gave it to
// the resumed call; it decides one attempt of that call, at one gate.
type confirmation struct {
	tool, callID, input string // input canonical
	confirmed           bool
	used                atomic.Bool
}

type confirmationKey struct{}

// takeFor reports whether c answers call (the same tool, call ID and
// input) and was not used yet, and uses it.
func (c *confirmation) takeFor(call approval.CallInfo) bool {
	if c == nil || call.Tool != c.tool || call.CallID != c.callID {
		return false
	}
	in := call.CanonicalInput
	if in == "" {
		in, _ = canonical.JSON(call.Input)
	}
	return in == c.input && c.used.CompareAndSwap(false, true)
}

// resumed returns ctx for a call of tool with input: when ADK resumed it
// with the user's confirmation, ctx carries that answer for Confirmations
// and continues the pause kept in the session's state (run.Resume: the
// same idempotency key and run).
func resumed(actx agent.Context, ctx context.Context, tool, input string) context.Context {
	tc := actx.ToolConfirmation()
	if tc == nil {
		return ctx
	}
	canon, err := canonical.JSON(input)
	if err != nil {
		return ctx // args-invalid: no gate will ask
	}
	// The user's answer counts only for a call that paused: the pause this
	// package kept in the session's state for the call ID, with this tool
	// and input. A confirmation request the model made up, or one whose
	// call was edited, confirms nothing: the approver decides.
	id := actx.FunctionCallID()
	key := pauseKey(id)
	v, err := actx.State().Get(key)
	if err != nil || v == nil {
		return ctx
	}
	ar := requiredOf(v)
	if ar == nil || ar.Tool != tool || ar.CallID != id {
		return ctx
	}
	if kept, err := canonical.JSON(ar.Input); err != nil || kept != canon {
		return ctx
	}
	_ = actx.State().Set(key, nil) // one resume per pause
	ctx = context.WithValue(ctx, confirmationKey{}, &confirmation{tool: tool, callID: id, input: canon, confirmed: tc.Confirmed})
	if ar.RunID != "" && ar.RunID == run.ID(ctx) {
		ar.RunID = "" // this run already: keep its scope
	}
	return run.Resume(ctx, ar)
}

// pauseKey is the session-state key of the pause of the call id.
func pauseKey(id string) string { return "toolsafe.pause." + id }

// payload is a pause as the confirmation request and the session's state
// carry it: JSON-friendly, for any session service.
type payload struct {
	Tool           string `json:"tool"`
	CallID         string `json:"call_id"`
	Input          string `json:"input"`
	Reason         string `json:"reason,omitempty"`
	Attempt        int    `json:"attempt"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	RunID          string `json:"run_id,omitempty"`
}

func payloadOf(ar *approval.Required) map[string]any {
	b, _ := json.Marshal(payload{ar.Tool, ar.CallID, ar.Input, ar.Reason, ar.Attempt, ar.IdempotencyKey, ar.RunID})
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// requiredOf reads a payload back, whatever shape a session service kept it
// in; nil when v is not one.
func requiredOf(v any) *approval.Required {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var p payload
	if json.Unmarshal(b, &p) != nil || p.Tool == "" {
		return nil
	}
	return &approval.Required{Tool: p.Tool, CallID: p.CallID, Input: p.Input, Reason: p.Reason,
		Attempt: p.Attempt, IdempotencyKey: p.IdempotencyKey, RunID: p.RunID}
}

// Request is one call waiting for the user's confirmation: ADK's
// adk_request_confirmation call, answered with Answer(ID, ...).
type Request struct {
	// ID is the ID of ADK's adk_request_confirmation call (not the paused
	// call's: that is Pause.CallID).
	ID string
	// Pause is the paused call: its tool, input, reason and attempt.
	Pause *approval.Required
}

// Requests returns the calls of toolsafe's tools that ev asks the user to
// confirm, in order; none when ev asks nothing. A request whose shown pause
// is not the call ADK would run on confirmation (another tool, call or
// input: one the model made up) is left out. The program shows them to
// the user and runs the session again with Answer.
func Requests(ev *session.Event) []Request {
	if ev == nil || ev.Content == nil {
		return nil
	}
	var out []Request
	for _, p := range ev.Content.Parts {
		fc := p.FunctionCall
		if fc == nil || fc.Name != toolconfirmation.FunctionCallName {
			continue
		}
		var args struct {
			Original struct {
				ID   string         `json:"id"`
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"originalFunctionCall"`
			ToolConfirmation struct {
				Payload any `json:"payload"`
			} `json:"toolConfirmation"`
		}
		b, err := json.Marshal(fc.Args)
		if err != nil || json.Unmarshal(b, &args) != nil {
			continue
		}
		ar := requiredOf(args.ToolConfirmation.Payload)
		if ar == nil || ar.Tool != args.Original.Name || ar.CallID != args.Original.ID {
			continue
		}
		// What the user is shown is what ADK runs when they confirm: the
		// call the request names, with the same input.
		in, err := argsJSON(args.Original.Args)
		if err != nil {
			continue
		}
		orig, err1 := canonical.JSON(in)
		shown, err2 := canonical.JSON(ar.Input)
		if err1 != nil || err2 != nil || orig != shown {
			continue
		}
		out = append(out, Request{ID: fc.ID, Pause: ar})
	}
	return out
}

// Answer returns the user's message that answers the confirmation request
// id (Request.ID): run the session again with it (runner.Run), and the
// paused call runs again, approved when confirmed, denied when not.
func Answer(id string, confirmed bool) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: id, Name: toolconfirmation.FunctionCallName, Response: map[string]any{"confirmed": confirmed},
	}}}}
}
