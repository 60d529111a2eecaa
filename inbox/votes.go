package inbox

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/toolsafe/toolsafe/approval"
)

// votesView is what the request's page shows of its quorum, its votes,
// and the forms a reply may add (changes, a message for the model).
type votesView struct {
	// Quorum is how many people must approve; Approvals how many approved
	// the call as shown.
	Quorum, Approvals int
	// Votes are the approvals given so far.
	Votes []voteView
	// Voted reports whether the viewer approved already.
	Voted bool
	// Edit is the input, indented, to start a change from; CanEdit
	// whether the inbox takes changes (never for a call whose earlier
	// attempt may have been applied: see changeAfterApplied), CanMessage a
	// denial's message.
	Edit                string
	CanEdit, CanMessage bool
	// EditBy is who approved the changes Edit starts from, when someone
	// approved with changes already; empty otherwise.
	EditBy pieces
}

type voteView struct {
	By, Changed pieces
	At          string
}

func (h *Handler) viewVotes(user string, r approval.Request, pretty string, isJSON bool) votesView {
	_, replies := h.store.(Replier)
	v := votesView{Quorum: max(r.Quorum, 1), CanMessage: replies, CanEdit: replies && h.cfg.check != nil && isJSON && !r.Call.MayHaveApplied, Edit: editable(pretty)}
	for _, vt := range r.Votes {
		if vt.Input == "" {
			v.Approvals++
		} else if v.EditBy == nil {
			// To concur with a vote with changes, one approves the same.
			p, _ := prettyJSON(vt.Input)
			v.Edit = editable(p)
			v.EditBy = showValue(vt.By, false)
		}
		v.Votes = append(v.Votes, voteView{By: showValue(vt.By, false), Changed: showInput(text(vt.Input), true), At: vt.At.UTC().Format("2006-01-02 15:04:05 UTC")})
	}
	v.Voted = slices.ContainsFunc(r.Votes, func(vt approval.Vote) bool { return approval.Voter(vt.By) == approval.Voter(user) })
	return v
}

// editable is the JSON text t as the person edits it: the same value,
// with each character of its strings that Reveal shows as a code written
// as a JSON escape (\u202e; a pair of them beyond U+FFFF), so that the
// arguments to edit read character for character as the Input above
// them does, and approving them unchanged approves the call as shown.
func editable(t string) string {
	var b strings.Builder
	for _, tk := range tokens(t) {
		if !tk.str {
			b.WriteString(tk.text)
			continue
		}
		var c coder
		for _, r := range tk.text {
			if !c.code(r) {
				b.WriteRune(r)
				continue
			}
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, "\\u%04x\\u%04x", hi, lo)
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
		}
	}
	return b.String()
}
