package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/toolsafe/toolsafe/canonical"
)

// MaxMessage is the longest message for the model a denial may carry, in
// characters: 500.
const MaxMessage = 500

// ErrAlreadyVoted is the error of an approval by someone who already
// approved the same request: one person is one vote, so a quorum of two
// always takes two people. Nothing was recorded. errors.Is tells it.
var ErrAlreadyVoted = errors.New("approval: you already approved this request; it waits for someone else's approval")

// Voter is the form of a person's name that counts their vote: the name
// without the characters that show nothing (format characters such as
// U+200B, U+00AD and U+2060, variation selectors, U+034F) and with
// surrounding spaces removed, in Unicode compatibility form (NFKC) and
// lower case. Two names with one Voter are one person, so "alice",
// "Alice", " alice", "alice\u200b" and the full-width "ａｌｉｃｅ" approve a
// request once between them, whatever spelling the identity function or a
// caller gave. Stores that count votes (Grants, redisstore's) compare
// this form.
func Voter(by string) string {
	shown := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || r == '\u034f' {
			return -1
		}
		return r
	}, by)
	return strings.ToLower(norm.NFKC.String(strings.TrimSpace(shown)))
}

// ErrEdited is the error Grants.Decide returns, pausing the call, for a
// request a person approved with changes: only an approval gate that reads
// the Verdict (toolsafe's does) can run the call with the changed input,
// and the input the model gave was not approved. The decision is kept for
// such a gate. errors.Is tells it.
var ErrEdited = errors.New("approval: the request was approved with changes, which only a gate that asks Verdict can apply")

// Reply is one person's answer to a request (see Grants.Reply): their
// decision and name, and what they may add to it.
type Reply struct {
	// Decision is Approved or Denied.
	Decision Decision
	// By is who answers, as the program identified them: one vote per
	// name. Comment is theirs, for the audit trail, possibly empty.
	By, Comment string
	// Input, for an approval, is the input the person approves instead of
	// the call's, as JSON: the grant covers it and not the call's own, and
	// the call runs with it. "" (or the call's input, as canonical JSON)
	// approves the call as shown. A denial carries none.
	Input string
	// Message, for a denial, is what the person tells the model, at most
	// MaxMessage characters of text; "" says nothing more than the denial.
	// An approval carries none.
	Message string
}

// Vote is one approval given to a request that waits for more of them
// (see Grants.Quorum).
type Vote struct {
	// By is who approved; At is when.
	By string
	At time.Time
	// Input is the changed input approved, canonical JSON, or "" for the
	// call as shown. Only votes for the same input count together.
	Input string
}

// Verdict is an Approver's answer with what a person added to it: the
// input they approved in place of the call's, or their message to the
// model with a denial.
type Verdict struct {
	// Decision is Pending, Approved or Denied, as Decide answers.
	Decision Decision
	// Input, when Decision is Approved and it is not "", is the input a
	// person approved instead of the call's (canonical JSON): the call runs
	// with it, and the model is told which fields changed.
	Input string
	// Message, when Decision is Denied, is the person's words for the
	// model (plain text, at most MaxMessage characters), or "".
	Message string
}

// VerdictApprover is an Approver that can tell what a person added to a
// decision. toolsafe's approval gate asks Verdict instead of Decide when
// its Approver has it. Verdict must be safe for concurrent use, and honour
// ctx as Decide does.
type VerdictApprover interface {
	Approver
	Verdict(ctx context.Context, call CallInfo) (Verdict, error)
}

var _ VerdictApprover = (*Grants)(nil)

// CheckReply returns the error of a reply that cannot be recorded, as
// CheckAnswer does, and for what it adds: an input on a denial or one that
// is not JSON an object, a message on an approval, or one that is not text
// or longer than MaxMessage. It returns the reply with Input in canonical
// form and Message trimmed. Stores call it before they record anything.
func CheckReply(r Reply) (Reply, error) {
	if err := CheckAnswer(r.Decision, r.By); err != nil {
		return r, err
	}
	r.Message = strings.TrimSpace(r.Message)
	switch {
	case r.Decision == Denied && r.Input != "":
		return r, errors.New("approval: a denial carries no changed input; approve with changes, or deny")
	case r.Decision == Approved && r.Message != "":
		return r, errors.New("approval: an approval carries no message for the model; write it in the comment")
	case !utf8.ValidString(r.Message) || utf8.RuneCountInString(r.Message) > MaxMessage:
		return r, fmt.Errorf("approval: the message for the model must be text of at most %d characters", MaxMessage)
	}
	if r.Input != "" {
		if !json.Valid([]byte(r.Input)) {
			return r, errors.New("approval: the changed input is not valid JSON: correct it and approve again")
		}
		canon, err := canonical.JSON(r.Input)
		if err != nil {
			return r, fmt.Errorf("approval: the changed input is not valid JSON (%v): correct it and approve again", err)
		}
		if !strings.HasPrefix(canon, "{") {
			return r, errors.New("approval: the changed input must be a JSON object, as the tool's arguments are")
		}
		r.Input = canon
	}
	return r, nil
}

// ChangedFields returns the names of the top-level fields whose values
// differ between the JSON objects from and to, sorted: those added,
// removed or changed. It returns nil when either is not a JSON object.
func ChangedFields(from, to string) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal([]byte(from), &a) != nil || json.Unmarshal([]byte(to), &b) != nil {
		return nil
	}
	var out []string
	for k, v := range a {
		w, ok := b[k]
		if !ok || !sameJSON(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func sameJSON(a, b json.RawMessage) bool {
	ca, err1 := canonical.JSON(string(a))
	cb, err2 := canonical.JSON(string(b))
	return err1 == nil && err2 == nil && ca == cb
}

// quorum is how many distinct people must approve a request of tool.
func (g *Grants) quorum(tool string) int {
	return max(g.Quorum[tool], 1)
}

// Reply answers the request named id as Answer does, with what a reply
// may add: a changed input with an approval (the grant covers it, not the
// call's own input), a message for the model with a denial, and the
// tool's quorum (Quorum): an approval of a tool that needs more than one
// is a vote, recorded in the audit trail (Record.Approvals of
// Record.Quorum), and the request goes on waiting, listed with its votes,
// until that many distinct people approved the same input; a denial ends it
// at once. It returns the record; ErrNotPending when no request with id
// waits; ErrAlreadyVoted when r.By approved it already; or CheckReply's
// error. Nothing was recorded on an error.
func (g *Grants) Reply(id string, r Reply) (Record, error) {
	r, err := CheckReply(r)
	if err != nil {
		return Record{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.expireLocked(now)
	i := slices.IndexFunc(g.pending, func(p pendingCall) bool { return p.id() == id })
	if i < 0 {
		return Record{}, ErrNotPending
	}
	p := &g.pending[i]
	if r.Input == p.key.input {
		r.Input = "" // the call as shown
	}
	rec := Record{RequestID: id, Decision: r.Decision, By: r.By, Comment: r.Comment, At: now, Since: p.since,
		Call: p.call(), Input: r.Input, Message: r.Message, Quorum: g.quorum(p.key.tool)}
	if r.Decision == Approved {
		if slices.ContainsFunc(p.votes, func(v Vote) bool { return Voter(v.By) == Voter(r.By) }) {
			return Record{}, ErrAlreadyVoted
		}
		rec.Approvals = 1
		for _, v := range p.votes {
			if v.Input == r.Input {
				rec.Approvals++
			}
		}
		if rec.Approvals < rec.Quorum {
			p.votes = append(p.votes, Vote{By: r.By, At: now, Input: r.Input})
			g.recordLocked(rec)
			return rec, nil
		}
	}
	g.addDecisionLocked(p.key, p.request, decided{d: r.Decision, input: r.Input, message: r.Message}, now)
	g.dropPendingLocked(p.key, p.request)
	g.recordLocked(rec)
	return rec, nil
}

func (g *Grants) recordLocked(r Record) {
	g.audit = append(g.audit, r)
	if n := len(g.audit) - g.maxAudit(); n > 0 {
		g.audit = append(g.audit[:0], g.audit[n:]...)
	}
}

// Verdict is Decide with what the person added: the changed input of an
// approval with changes, the message of a denial. A call uses an answer
// given with changes only through Verdict.
func (g *Grants) Verdict(_ context.Context, call CallInfo) (Verdict, error) {
	v, _ := g.verdict(call, true)
	return v, nil
}
