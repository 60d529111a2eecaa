package inbox

import (
	"errors"
	"net/http"
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
	var d approval.Decision
	switch r.PostForm.Get("decision") {
	case "approve":
		d = approval.Approved
	case "deny":
		d = approval.Denied
	default:
		refuse(http.StatusBadRequest, "Refused", "Choose Approve or Deny.")
		return
	}
	comment := strings.TrimSpace(r.PostForm.Get("comment"))
	if !utf8.ValidString(comment) || utf8.RuneCountInString(comment) > MaxComment {
		refuse(http.StatusBadRequest, "Refused", "The comment must be text of at most 1,000 characters.")
		return
	}
	rec, err := h.store.Answer(r.Context(), id, d, user, comment)
	switch {
	case errors.Is(err, approval.ErrNotPending):
		answered, problem := h.answered(r.Context(), id)
		text := "Your answer was not recorded: this request had already been answered."
		if answered == nil {
			text = "Your answer was not recorded. " + problem
		}
		h.renderStatus(w, "message", message{User: user, Title: "Not recorded", Text: text, Answered: answered}, http.StatusConflict)
		return
	case errors.Is(err, approval.ErrTooManyDecisions):
		h.storeFailed(r, "answer", err)
		h.renderStatus(w, "message", message{User: user, Title: "Not recorded", Text: tooManyDecisions}, http.StatusConflict)
		return
	case err != nil:
		h.storeFailed(r, "answer", err)
		refuse(http.StatusServiceUnavailable, "Not confirmed",
			"The approvals store did not confirm your answer: it is unavailable. An answer is recorded whole or not at all: when the store is back, look at the list; if the request still waits, nothing was recorded.")
		return
	}
	// Relative, and not through http.Redirect, which would resolve it
	// against the path under the inbox's mount point.
	w.Header().Set("Location", "./?answered="+rec.Decision.String())
	w.WriteHeader(http.StatusSeeOther)
}
