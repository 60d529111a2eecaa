package adktools

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"
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

// resumed returns ctx for a call of tool with input. Called by ADK with
// no confirmation, it is ctx and ok. Called with the user's answer to a
// confirmation request (ADK's resume), it is ok only when the answer
// decides a pause this package kept in the session's state (see decides):
// then ctx carries the answer for Confirmations and continues the pause
// (run.Resume: the same idempotency key and run), the pause is used up,
// and h learns which request a later pause of the call is answered with.
// Otherwise the answer decides nothing and the call must not run: the
// state is left as it was.
func resumed(actx agent.Context, ctx context.Context, h *host, tool, input string) (context.Context, bool) {
	tc := actx.ToolConfirmation()
	if tc == nil {
		return ctx, true
	}
	canon, err := canonical.JSON(input)
	if err != nil {
		return ctx, false
	}
	id := actx.FunctionCallID()
	key := pauseKey(id)
	v, err := actx.State().Get(key)
	if err != nil || v == nil {
		return ctx, false // nothing of this call waits: made up, or answered already
	}
	kept := payloadFrom(v)
	if kept == nil || kept.Tool != tool || kept.CallID != id {
		return ctx, false
	}
	if in, err := canonical.JSON(kept.Input); err != nil || in != canon {
		return ctx, false // ADK would run another input than the one that paused
	}
	via, ok := decides(actx, kept, tc)
	if !ok {
		return ctx, false
	}
	if err := actx.State().Set(key, nil); err != nil { // one resume per pause
		return ctx, false
	}
	h.answerWith = via
	ctx = context.WithValue(ctx, confirmationKey{}, &confirmation{tool: tool, callID: id, input: canon, confirmed: tc.Confirmed})
	ar := kept.required()
	if ar.RunID != "" && ar.RunID == run.ID(ctx) {
		ar.RunID = "" // this run already: keep its scope
	}
	return run.Resume(ctx, ar), true
}

// decides reports whether the user's answer tc decides the pause kept, and
// returns the ID of the adk_request_confirmation call answered, through
// which a later pause of the call is asked. The answer must carry the
// pause's token (Answer puts it there, from the ID of a Request): the model
// never sees a token, so a request it made up cannot be answered with one,
// and a token is used up with its pause, so an answer sent again decides
// nothing. A pause asked again through a request is decided only through
// that request. A kept pause without a token decides nothing.
func decides(actx agent.Context, kept *payload, tc *toolconfirmation.ToolConfirmation) (string, bool) {
	if kept.Token == "" || tokenOf(tc.Payload) != kept.Token {
		return "", false
	}
	via := answeredWith(actx.UserContent(), kept.Token)
	if via == "" || (kept.AnswerWith != "" && via != kept.AnswerWith) {
		return "", false
	}
	return via, true
}

// answeredWith returns the ID of the adk_request_confirmation call that
// msg, the user's message, answers with token; "" when none.
func answeredWith(msg *genai.Content, token string) string {
	if msg == nil {
		return ""
	}
	for _, p := range msg.Parts {
		fr := p.FunctionResponse
		if fr == nil || fr.Name != toolconfirmation.FunctionCallName || fr.Response == nil {
			continue
		}
		var tc toolconfirmation.ToolConfirmation
		if s, ok := fr.Response["response"].(string); ok && len(fr.Response) == 1 {
			// ADK's web client sends the answer as JSON text under "response".
			if json.Unmarshal([]byte(s), &tc) != nil {
				continue
			}
		} else {
			b, err := json.Marshal(fr.Response)
			if err != nil || json.Unmarshal(b, &tc) != nil {
				continue
			}
		}
		if tokenOf(tc.Payload) == token {
			return fr.ID
		}
	}
	return ""
}

// tokenOf is the token of a pause in the payload of the user's answer
// (Answer puts it there), or "".
func tokenOf(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var p struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Token
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
	// Token is the pause's own: random, never shown to the model. An
	// answer decides the pause only when it carries the token.
	Token string `json:"token,omitempty"`
	// AnswerWith is, for a pause of a call ADK resumed (which ADK v2.2.0
	// does not turn into a request of its own), the adk_request_confirmation
	// call whose answer, with the token, decides it; "" otherwise.
	AnswerWith string `json:"answer_with,omitempty"`
}

// newPayload is ar as a pause to keep, with a token of its own.
func newPayload(ar *approval.Required, answerWith string) *payload {
	return &payload{ar.Tool, ar.CallID, ar.Input, ar.Reason, ar.Attempt, ar.IdempotencyKey, ar.RunID,
		rand.Text(), answerWith}
}

// asMap is p as ADK and the session's state keep it.
func (p *payload) asMap() map[string]any {
	b, _ := json.Marshal(p)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func (p *payload) required() *approval.Required {
	return &approval.Required{Tool: p.Tool, CallID: p.CallID, Input: p.Input, Reason: p.Reason,
		Attempt: p.Attempt, IdempotencyKey: p.IdempotencyKey, RunID: p.RunID}
}

// payloadFrom reads a payload back, whatever shape a session service kept
// it in; nil when v is not one.
func payloadFrom(v any) *payload {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var p payload
	if json.Unmarshal(b, &p) != nil || p.Tool == "" {
		return nil
	}
	return &p
}

// request is an adk_request_confirmation call read: the call ADK runs on
// confirmation, and the pause its payload shows (nil when none).
type request struct {
	call struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	pause *payload
}

// requestOf reads the confirmation request fc; false when fc is not one.
func requestOf(fc *genai.FunctionCall) (request, bool) {
	var r request
	var args struct {
		Original         json.RawMessage `json:"originalFunctionCall"`
		ToolConfirmation struct {
			Payload any `json:"payload"`
		} `json:"toolConfirmation"`
	}
	b, err := json.Marshal(fc.Args)
	if err != nil || json.Unmarshal(b, &args) != nil || json.Unmarshal(args.Original, &r.call) != nil {
		return r, false
	}
	r.pause = payloadFrom(args.ToolConfirmation.Payload)
	return r, true
}

// Request is one call waiting for the user's confirmation, answered with
// Answer(ID, ...).
type Request struct {
	// ID is what Answer takes: the ID of ADK's adk_request_confirmation
	// call (not the paused call's: that is Pause.CallID), "#" and the
	// pause's token, which the answer carries back so that it decides that
	// pause and no other. The model never sees a token.
	ID string
	// Pause is the paused call: its tool, input, reason and attempt.
	Pause *approval.Required
}

// Requests returns the calls of toolsafe's tools that ev asks the user to
// confirm, in order; none when ev asks nothing. Look at every event of a
// run: a call that pauses when the model calls it is asked by ADK's
// adk_request_confirmation event; a call that pauses again once ADK resumed
// it (a destructive tool's retry needs an approval of its own) is asked by
// the event of its answer, since ADK v2.2.0 makes no request of its own
// for it. A request whose shown pause is not the call ADK would run on
// confirmation (another tool, call or input: one the model made up) is left
// out. The program shows them to the user and runs the session again with
// Answer.
func Requests(ev *session.Event) []Request {
	if ev == nil || ev.Content == nil {
		return nil
	}
	var out []Request
	for _, p := range ev.Content.Parts {
		if fc := p.FunctionCall; fc != nil && fc.Name == toolconfirmation.FunctionCallName {
			if r, ok := shown(fc); ok {
				out = append(out, r)
			}
		}
		if fr := p.FunctionResponse; fr != nil {
			if r, ok := askedAgain(ev, fr); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// shown is the confirmation request fc as a Request, when the pause it
// shows is the call ADK runs when the user confirms: the call the request
// names, with the same input.
func shown(fc *genai.FunctionCall) (Request, bool) {
	r, ok := requestOf(fc)
	if !ok || r.pause == nil || r.pause.Tool != r.call.Name || r.pause.CallID != r.call.ID {
		return Request{}, false
	}
	in, err := argsJSON(r.call.Args)
	if err != nil {
		return Request{}, false
	}
	orig, err1 := canonical.JSON(in)
	showing, err2 := canonical.JSON(r.pause.Input)
	if err1 != nil || err2 != nil || orig != showing {
		return Request{}, false
	}
	id := fc.ID
	if isToken(r.pause.Token) {
		id += tokenMark + r.pause.Token
	}
	return Request{ID: id, Pause: r.pause.required()}, true
}

// askedAgain is the pause a call asked for once ADK resumed it, kept in the
// actions of the event of its answer fr, as a Request.
func askedAgain(ev *session.Event, fr *genai.FunctionResponse) (Request, bool) {
	tc, ok := ev.Actions.RequestedToolConfirmations[fr.ID]
	if !ok {
		return Request{}, false
	}
	p := payloadFrom(tc.Payload)
	if p == nil || p.AnswerWith == "" || !isToken(p.Token) || p.Tool != fr.Name || p.CallID != fr.ID {
		return Request{}, false
	}
	return Request{ID: p.AnswerWith + tokenMark + p.Token, Pause: p.required()}, true
}

// tokenMark separates a request's ID from a pause's token in Request.ID.
const tokenMark = "#"

// isToken reports whether s is a token of crypto/rand.Text.
func isToken(s string) bool {
	if len(s) != 26 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// Answer returns the user's message that answers the confirmation request
// id (Request.ID): run the session again with it (runner.Run), and the
// paused call runs again, approved when confirmed, denied when not. An
// answer decides one pause once: sent again (a double click, a retried
// request), or to a request toolsafe did not make, it decides nothing, and
// the call is not run.
func Answer(id string, confirmed bool) *genai.Content {
	resp := map[string]any{"confirmed": confirmed}
	if i := strings.LastIndex(id, tokenMark); i >= 0 && isToken(id[i+len(tokenMark):]) {
		resp["payload"] = map[string]any{"token": id[i+len(tokenMark):]}
		id = id[:i]
	}
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: id, Name: toolconfirmation.FunctionCallName, Response: resp,
	}}}}
}
