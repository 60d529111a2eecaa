package inbox

import (
	"context"
	"errors"
	"slices"

	"github.com/toolsafe/toolsafe/approval"
)

// Authorize reports whether user may decide req. The inbox shows a person
// only the requests, and audit records, of what they may decide, and
// refuses (403) a decision, or a request's page, of anything else. It must
// be safe for concurrent use, and quick: the inbox calls it for every
// request it lists.
type Authorize func(user string, req approval.Request) bool

// WithAuthorize sets who may decide what (default: every identified user
// decides everything). A refused decision, or a refused opening of a
// request's page, is answered 403, written to the log at WARN (user, tool
// and request ID), and recorded in the audit trail when the store keeps
// events (EventStore: memory's and redisstore's do), where those who may
// decide the request see it.
func WithAuthorize(a Authorize) Option {
	return optionFunc(func(c *config) { c.authorize = a })
}

// Groups are the people of each group, by name, as the program knows them
// (its directory, its configuration): Groups{"finance": {"alice", "bob"}}.
type Groups map[string][]string

// Approvers returns the Authorize of per-tool approver groups: user may
// decide a request of a tool named in approvers when a group the tool
// lists has user as a member (groups); a tool that lists no group, or is
// not in approvers, is decided by nobody. A group named in approvers but
// missing from groups has no members. The maps are read when it is
// called: do not change them afterwards. policyfile.File.Approvers gives
// approvers from a policies file.
func Approvers(groups Groups, approvers map[string][]string) Authorize {
	return func(user string, req approval.Request) bool {
		for _, g := range approvers[req.Call.Tool] {
			if slices.Contains(groups[g], user) {
				return true
			}
		}
		return false
	}
}

func (h *Handler) may(user string, req approval.Request) bool {
	return h.cfg.authorize == nil || h.cfg.authorize(user, req)
}

// mayRecord reports whether user may see rec: the request it answered is
// one they may decide.
func (h *Handler) mayRecord(user string, rec approval.Record) bool {
	return h.may(user, approval.Request{ID: rec.RequestID, Since: rec.Since, Call: rec.Call})
}

// Replier is a Store that also takes replies (approval.Reply): approvals
// with changes, denials with a message for the model, and votes towards a
// tool's quorum. Memory's Store is one, and so is redisstore's Grants.
// Without it the inbox offers approve and deny only.
type Replier interface {
	Reply(ctx context.Context, id string, r approval.Reply) (approval.Record, error)
}

func (m memory) Reply(_ context.Context, id string, r approval.Reply) (approval.Record, error) {
	return m.g.Reply(id, r)
}

// request finds the request id among those waiting.
func (h *Handler) request(ctx context.Context, id string) (approval.Request, bool, error) {
	reqs, err := h.store.Requests(ctx)
	if err != nil {
		return approval.Request{}, false, err
	}
	i := slices.IndexFunc(reqs, func(q approval.Request) bool { return q.ID == id })
	if i < 0 {
		return approval.Request{}, false, nil
	}
	return reqs[i], true, nil
}

// errNoReplies is the refusal of a change or a message by a store that is
// not a Replier.
var errNoReplies = errors.New("inbox: the store takes plain approvals and denials only")

// WithInputCheck lets a person change a call's arguments before approving
// it ("Approve with changes"): check tells whether input fits the
// arguments of tool, e.g. with the tool's (*argschema.Schema).Check, and
// its error, shown to the person as text, says what is wrong. Without it
// the inbox takes no changes. The store must be a Replier.
func WithInputCheck(check func(tool, input string) error) Option {
	return optionFunc(func(c *config) { c.check = check })
}
