package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolsafe/toolsafe/approval"
)

// listInputChars is how much of an input the list shows; the request's
// page shows all of it.
const listInputChars = 2000

// recentAnswers is how many answers the list page shows.
const recentAnswers = 20

// requestView is one pending request as the pages show it: text only,
// every field an agent controls shown through Reveal (pieces).
type requestView struct {
	ID, Reason                    string
	Tool, Input, ListInput        pieces
	Canonical, RunID, CallID, Key pieces
	Attempt                       int
	Destructive, MayHaveApplied   bool
	Since, SinceUTC, Age          string
	RunIDRaw                      string      // the run ID as given, for a link's query (escaped there)
	Fields                        []fieldView // a big input's top-level fields (bigFields); nil: shown whole
	InputSize                     string
	Token                         string
	Warnings                      []warning
	Votes                         votesView
}

// recordView is one audit record as the pages show it.
type recordView struct {
	At, AtISO, Decision, RequestID string
	By, Comment, Tool, Input       pieces
	Canonical, RunID, CallID       pieces
	Attempt                        int
	Warnings                       []warning
	Changed, Message               pieces
	Approvals, Quorum              int
	HasChanges, HasMessage         bool
	Event                          string // what happened, for an event (viewEvent); "" for an answer
}

// pageData is what every page and the live part render.
type pageData struct {
	User     string
	PollMS   int64
	Problem  string
	Status   int // the page's status when the store failed
	Notice   string
	Requests []requestView
	Recent   []recordView
	Request  *requestView
	Answered *recordView
	Overflow *overflowView // what the full list dropped, when it did
	Filter   filter        // what the list or the audit trail was asked for
	Pager    pager         // where its page is
}

var funcs = template.FuncMap{}

// callWarnings are the warnings about the fields of c an agent controls.
func callWarnings(c approval.CallInfo) []warning {
	var ws []warning
	for _, f := range []struct{ what, v string }{
		{"the tool name", c.Tool}, {"the input", c.Input}, {"the run ID", c.RunID},
		{"the call ID", c.CallID}, {"the idempotency key", c.IdempotencyKey},
	} {
		ws = append(ws, warningsOf(f.what, f.v, f.what == "the input")...)
	}
	return ws
}

func (h *Handler) viewRequest(user string, r approval.Request, now time.Time) requestView {
	c := r.Call
	pretty, isJSON := prettyJSON(c.Input)
	return requestView{
		ID: r.ID, Tool: showValue(c.Tool, false), Input: showInput(pretty, isJSON), ListInput: clip(pretty, isJSON, listInputChars),
		Canonical: showInput(text(c.CanonicalInput), isJSON), Reason: c.Reason(),
		RunID: showValue(c.RunID, false), CallID: showValue(c.CallID, false), Key: showValue(c.IdempotencyKey, false),
		Attempt: c.Attempt, Destructive: c.Destructive, MayHaveApplied: c.MayHaveApplied, RunIDRaw: c.RunID, Fields: bigFields(c.Input), InputSize: size(len(c.Input)),
		Since: r.Since.UTC().Format(time.RFC3339), SinceUTC: r.Since.UTC().Format("2006-01-02 15:04:05 UTC"), Age: age(now.Sub(r.Since)),
		Token:    h.token(user, r.ID, now),
		Warnings: callWarnings(c),
		Votes:    h.viewVotes(user, r, pretty, isJSON),
	}
}

func viewRecord(r approval.Record) recordView {
	pretty, isJSON := prettyJSON(r.Call.Input)
	ws := callWarnings(r.Call)
	ws = append(ws, warningsOf("the comment", r.Comment, true)...)
	ws = append(ws, warningsOf("the approver's name", r.By, false)...)
	return recordView{
		At: r.At.UTC().Format("2006-01-02 15:04:05 UTC"), AtISO: r.At.UTC().Format(time.RFC3339), By: showValue(r.By, false), Decision: r.Decision.String(),
		Comment: showValue(r.Comment, true), Tool: showValue(r.Call.Tool, false), Input: clip(pretty, isJSON, listInputChars),
		Canonical: showInput(text(r.Call.CanonicalInput), isJSON), RunID: showValue(r.Call.RunID, false), CallID: showValue(r.Call.CallID, false),
		RequestID: r.RequestID, Attempt: r.Call.Attempt, Warnings: ws,
		Changed: showInput(text(r.Input), true), Message: showValue(r.Message, true),
		Approvals: r.Approvals, Quorum: r.Quorum, HasChanges: r.Input != "", HasMessage: r.Message != "",
	}
}

// text makes s valid UTF-8; html/template escapes it where it is shown.
func text(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// prettyJSON indents input when it is JSON, and returns it as text
// otherwise; isJSON says which.
func prettyJSON(input string) (pretty string, isJSON bool) {
	var b bytes.Buffer
	if json.Valid([]byte(input)) && json.Indent(&b, []byte(input), "", "  ") == nil {
		return b.String(), true
	}
	return text(input), false
}

// clip shows the input s (see showInput), shortened to n characters,
// saying how many it left out.
func clip(s string, isJSON bool, n int) pieces {
	if utf8.RuneCountInString(s) <= n {
		return showInput(s, isJSON)
	}
	r := []rune(s)
	return append(showInput(string(r[:n]), isJSON), piece{Text: fmt.Sprintf("… (%d more characters: open the request)", len(r)-n)})
}

// age says how long ago something happened, to the second: "42s",
// "3m 5s", "2h 7m", "3d 4h".
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 48*3600:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}
