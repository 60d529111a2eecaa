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

// requestView is one pending request as the pages show it: text only.
type requestView struct {
	ID, Tool, Input, ListInput, Canonical, Reason string
	RunID, CallID, Key                            string
	Attempt                                       int
	Destructive, MayHaveApplied                   bool
	Since, Age                                    string
	Token                                         string
}

// recordView is one audit record as the pages show it.
type recordView struct {
	At, By, Decision, Comment, Tool, Input, Canonical string
	RunID, CallID, RequestID                          string
	Attempt                                           int
}

// pageData is what every page and the live part render.
type pageData struct {
	User     string
	PollMS   int64
	Problem  string
	Notice   string
	Requests []requestView
	Recent   []recordView
	Request  *requestView
	Answered *recordView
}

var funcs = template.FuncMap{}

func (h *Handler) viewRequest(user string, r approval.Request, now time.Time) requestView {
	c := r.Call
	pretty := prettyJSON(c.Input)
	return requestView{
		ID: r.ID, Tool: text(c.Tool), Input: pretty, ListInput: clip(pretty, listInputChars),
		Canonical: text(c.CanonicalInput), Reason: c.Reason(),
		RunID: text(c.RunID), CallID: text(c.CallID), Key: text(c.IdempotencyKey),
		Attempt: c.Attempt, Destructive: c.Destructive, MayHaveApplied: c.MayHaveApplied,
		Since: r.Since.UTC().Format(time.RFC3339), Age: age(now.Sub(r.Since)),
		Token: h.token(user, r.ID, now),
	}
}

func viewRecord(r approval.Record) recordView {
	return recordView{
		At: r.At.UTC().Format("2006-01-02 15:04:05 UTC"), By: text(r.By), Decision: r.Decision.String(),
		Comment: text(r.Comment), Tool: text(r.Call.Tool), Input: clip(prettyJSON(r.Call.Input), listInputChars),
		Canonical: text(r.Call.CanonicalInput), RunID: text(r.Call.RunID), CallID: text(r.Call.CallID),
		RequestID: r.RequestID, Attempt: r.Call.Attempt,
	}
}

// text makes s valid UTF-8; html/template escapes it where it is shown.
func text(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// prettyJSON indents input when it is JSON, and returns it as text
// otherwise.
func prettyJSON(input string) string {
	var b bytes.Buffer
	if json.Valid([]byte(input)) && json.Indent(&b, []byte(input), "", "  ") == nil {
		return b.String()
	}
	return text(input)
}

// clip shortens s to n characters, saying how many it left out.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + fmt.Sprintf("… (%d more characters: open the request)", len(r)-n)
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
