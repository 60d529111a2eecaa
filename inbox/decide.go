package inbox

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolsafe/toolsafe/approval"
)

// maxForm caps the body of a decision: 64 KiB.
const maxForm = 64 << 10

// tooManyDecisions is what a person is told when the store refused their
// answer with approval.ErrTooManyDecisions.
const tooManyDecisions = "Your answer was not recorded: too many approvals and denials of this tool with this input already wait to be used by their calls, so the store refused one more. They are used as their runs resume, or expire; try again once some are, or ask whoever runs the agents to revoke those no longer wanted. This request still waits."

// storeUnconfirmed is what a person is told when the store failed while
// taking their answer.
const storeUnconfirmed = "The approvals store did not confirm your answer: it is unavailable. An answer is recorded whole or not at all: when the store is back, look at the list; if the request still waits, nothing was recorded."

// message is the page of a refused or failed decision.
type message struct {
	User, Title, Text string
	Answered          *recordView
}

// decide records an approval or a denial of the request named by the form's
// id, for the signed-in user: only with the token the request's page gave
// this user for that very request, and only while the request waits as
// shown. The store decides and records it in one step.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request) {
	user := userOf(r)
	refuse := func(status int, title, text string) {
		h.renderStatus(w, "message", message{User: user, Title: title, Text: text}, status)
	}
	if err := h.origin.Check(r); err != nil {
		refuse(http.StatusForbidden, "Refused", "A decision must come from the inbox's own page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		refuse(http.StatusBadRequest, "Refused", "The form could not be read.")
		return
	}
	id := r.PostForm.Get("id")
	if !h.validToken(r.PostForm.Get("token"), user, id, time.Now()) {
		refuse(http.StatusForbidden, "Refused", "This form is not valid for you: its token is missing, altered or older than 12 hours. Open the request again and decide there.")
		return
	}
	reply := approval.Reply{By: user}
	switch r.PostForm.Get("decision") {
	case "approve":
		reply.Decision = approval.Approved
	case "approve-changed":
		reply.Decision = approval.Approved
		reply.Input = r.PostForm.Get("changed")
	case "deny":
		reply.Decision = approval.Denied
		reply.Message = r.PostForm.Get("message")
	default:
		refuse(http.StatusBadRequest, "Refused", "Choose Approve or Deny.")
		return
	}
	req, found, err := h.request(r.Context(), id)
	if err != nil {
		h.storeFailed(r, "requests", err)
		refuse(http.StatusServiceUnavailable, "Not confirmed", storeUnconfirmed)
		return
	}
	if !found {
		// Not listed: answered, expired, asked again, or pushed out of a
		// list that keeps more than it shows (redisstore's). Deciding it
		// unseen would skip every check below, so nothing is recorded.
		h.notPending(w, r, user, id)
		return
	}
	if !h.may(user, req) {
		h.refused(w, r, req, "decide")
		return
	}
	if reply.Decision == approval.Approved && needsSecondConfirmation(req) && r.PostForm.Get("confirm") != confirmResend {
		refuse(http.StatusBadRequest, "Not recorded", "An earlier attempt of this destructive call may already have been applied, and approving sends it again. Tick “I checked: sending it again is right” and approve again, or deny. Nothing was recorded.")
		return
	}
	reply.Comment = strings.TrimSpace(r.PostForm.Get("comment"))
	if !utf8.ValidString(reply.Comment) || utf8.RuneCountInString(reply.Comment) > MaxComment {
		refuse(http.StatusBadRequest, "Refused", "The comment must be text of at most 1,000 characters.")
		return
	}
	if reply.Input == "" && reply.Decision == approval.Approved && edited(req, r.PostForm.Get("changed")) {
		refuse(http.StatusBadRequest, "Not recorded", "You changed the arguments but chose Approve, which approves the call as the model asked it: choose Approve with changes to approve your arguments, or undo your changes. Nothing was recorded.")
		return
	}
	if reply.Input != "" && req.Call.MayHaveApplied {
		refuse(http.StatusBadRequest, "Not recorded", changeAfterApplied)
		return
	}
	if reply.Input != "" {
		if problem := h.checkChanged(req, reply.Input); problem != "" {
			refuse(http.StatusBadRequest, "Changes not valid", problem)
			return
		}
	}
	rec, err := h.reply(r.Context(), id, reply)
	if errors.Is(err, approval.ErrAlreadyVoted) {
		h.renderStatus(w, "message", message{User: user, Title: "Already approved by you", Text: "Your approval of this request is recorded already: it waits for another person's approval. One person is one vote."}, http.StatusConflict)
		return
	}
	if errors.Is(err, errNoReplies) {
		refuse(http.StatusBadRequest, "Refused", "This inbox's store takes plain approvals and denials only: approve without changes, or deny without a message.")
		return
	}
	var bad *badReply
	if errors.As(err, &bad) {
		refuse(http.StatusBadRequest, "Refused", bad.text)
		return
	}
	switch {
	case errors.Is(err, approval.ErrNotPending):
		h.notPending(w, r, user, id)
		return
	case errors.Is(err, approval.ErrTooManyDecisions):
		h.storeFailed(r, "answer", err)
		h.renderStatus(w, "message", message{User: user, Title: "Not recorded", Text: tooManyDecisions}, http.StatusConflict)
		return
	case err != nil:
		h.storeFailed(r, "answer", err)
		refuse(http.StatusServiceUnavailable, "Not confirmed", storeUnconfirmed)
		return
	}
	// Relative, and not through http.Redirect, which would resolve it
	// against the path under the inbox's mount point.
	answered := rec.Decision.String()
	if rec.Decision == approval.Approved && rec.Approvals < rec.Quorum {
		answered = "voted"
	}
	w.Header().Set("Location", "./?answered="+answered)
	w.WriteHeader(http.StatusSeeOther)
}

// notPending answers a decision of the request id, which no longer waits
// as listed: 409, with its record when it was answered.
func (h *Handler) notPending(w http.ResponseWriter, r *http.Request, user, id string) {
	answered, problem := h.answered(r.Context(), user, id)
	text := "Your answer was not recorded: this request had already been answered."
	if answered == nil {
		text = "Your answer was not recorded. " + problem
	}
	h.renderStatus(w, "message", message{User: user, Title: "Not recorded", Text: text, Answered: answered}, http.StatusConflict)
}

// changeAfterApplied refuses changes to a call whose earlier attempt may
// already have been applied: that attempt was sent with the arguments
// shown, and the next is sent under the same idempotency key, so an
// upstream that honours the key would keep the first arguments while the
// model is told the person's ran.
const changeAfterApplied = "An earlier attempt of this call may already have been applied with the arguments shown, and the next one is sent under the same idempotency key: changing its arguments now could leave the first ones applied while the model is told yours ran. Approve it as shown, or deny it and say why in the message. Nothing was recorded."

// confirmResend is the form's value of the second, explicit confirmation
// an approval needs when needsSecondConfirmation.
const confirmResend = "resend"

// needsSecondConfirmation tells whether approving req may apply a
// destructive action twice: an earlier attempt of its call may have been
// applied (its outcome is unknown), so the person confirms, on its own
// checkbox, that sending it again is right. The server refuses an
// approval without it; a denial needs none.
func needsSecondConfirmation(req approval.Request) bool {
	return req.Call.Destructive && req.Call.MayHaveApplied
}

// badReply is a reply the approval package refused as it was written (a
// changed input that is not a JSON object, a message too long): its text
// is for the person.
type badReply struct{ text string }

func (e *badReply) Error() string { return e.text }

// reply records r through the store: Reply when it is a Replier, else
// Answer, which takes no change and no message.
func (h *Handler) reply(ctx context.Context, id string, r approval.Reply) (approval.Record, error) {
	checked, err := approval.CheckReply(r)
	if err != nil {
		return approval.Record{}, &badReply{strings.TrimPrefix(err.Error(), "approval: ")}
	}
	if rp, ok := h.store.(Replier); ok {
		return rp.Reply(ctx, id, checked)
	}
	if checked.Input != "" || checked.Message != "" {
		return approval.Record{}, errNoReplies
	}
	return h.store.Answer(ctx, id, r.Decision, r.By, r.Comment)
}

// checkChanged says what is wrong with input, a person's change of req's
// input, or "": it must be accepted by the tool's check (WithInputCheck).
func (h *Handler) checkChanged(req approval.Request, input string) string {
	if h.cfg.check == nil {
		return "This inbox does not take changes to a call's arguments: approve the call as shown, or deny it."
	}
	if err := h.cfg.check(req.Call.Tool, input); err != nil {
		return "The changed arguments do not fit the tool's schema: " + err.Error() + " Nothing was recorded; correct them and approve again."
	}
	return ""
}

// edited reports whether changed, the form's arguments, differs from
// what the page filled them with: req's input, or the changes of the
// first vote with changes (viewVotes), which the next person's plain
// Approve leaves as they were. It tells a person who edited them and
// chose Approve.
func edited(req approval.Request, changed string) bool {
	if strings.TrimSpace(changed) == "" {
		return false
	}
	checked, err := approval.CheckReply(approval.Reply{Decision: approval.Approved, By: "-", Input: changed})
	if err != nil {
		return true
	}
	filled := req.Call.CanonicalInput
	if i := slices.IndexFunc(req.Votes, func(v approval.Vote) bool { return v.Input != "" }); i >= 0 {
		filled = req.Votes[i].Input
	}
	return checked.Input != filled && checked.Input != req.Call.CanonicalInput
}
