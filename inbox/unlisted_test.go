package inbox_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// unlisting is a store that keeps more requests than it lists, as
// redisstore's does once more than MaxPending wait (Overflow.Unlisted):
// while hide is set, Requests leaves the first request out, and Reply
// still finds it by its ID.
type unlisting struct {
	g    *approval.Grants
	hide atomic.Bool
}

func (u *unlisting) Requests(context.Context) ([]approval.Request, error) {
	rs := u.g.Requests()
	if u.hide.Load() && len(rs) > 0 {
		rs = rs[1:]
	}
	return rs, nil
}

func (u *unlisting) Answer(_ context.Context, id string, d approval.Decision, by, comment string) (approval.Record, error) {
	return u.g.Answer(id, d, by, comment)
}

func (u *unlisting) Reply(_ context.Context, id string, r approval.Reply) (approval.Record, error) {
	return u.g.Reply(id, r)
}

func (u *unlisting) Audit(_ context.Context, limit int) ([]approval.Record, error) {
	return u.g.Audit(limit), nil
}

// A request pushed out of the list (a flood of newer ones, over Redis)
// while its form is open is still in the store: a decision posted for it
// must meet the same checks as one for a listed request (who may decide,
// the second confirmation, the tool's check of changes), or else record
// nothing.
func TestADecisionForARequestNoLongerListedMeetsEveryCheckOrRecordsNothing(t *testing.T) {
	c := refundCall(refundInput, 2)
	c.MayHaveApplied = true
	var bobMay atomic.Bool
	bobMay.Store(true)
	for _, tc := range []struct {
		name   string
		user   string
		set    func(f map[string][]string)
		before func()
	}{
		{"an approval without the second confirmation", "alice", func(map[string][]string) {}, nil},
		{"changes the tool's check refuses", "alice", func(f map[string][]string) {
			f["decision"] = []string{"approve-changed"}
			f["changed"] = []string{`{"order":"A-1001","amount_eur":"lots"}`}
			f["confirm"] = []string{"resend"}
		}, nil},
		{"a person no longer allowed to decide it", "bob", func(f map[string][]string) { f["confirm"] = []string{"resend"} }, func() { bobMay.Store(false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bobMay.Store(true)
			u := &unlisting{g: waiting(t, c)}
			h := newInbox(t, u,
				inbox.WithAuthorize(func(user string, _ approval.Request) bool { return user == "alice" || bobMay.Load() }),
				inbox.WithInputCheck(func(_, input string) error {
					if input != refundInput {
						return errors.New("amount_eur must be a number.")
					}
					return nil
				}))
			id := onlyRequest(t, u.g).ID
			f := form(t, h, tc.user, id, "approve", "")
			tc.set(f)
			u.hide.Store(true)
			if tc.before != nil {
				tc.before()
			}
			w := send(h, tc.user, http.MethodPost, "/decide", f)
			if n := len(u.g.Audit(0)); n != 0 || w.Code == http.StatusSeeOther {
				t.Fatalf("%d; recorded %d answers: %+v", w.Code, n, u.g.Audit(0))
			}
		})
	}
}
