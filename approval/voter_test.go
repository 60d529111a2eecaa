package approval_test

import (
	"errors"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
)

// One person is one vote whatever invisible characters their name was
// given with: a quorum of three is not met by "alice" alone.
func TestANameWithInvisibleCharactersIsTheSameVoter(t *testing.T) {
	g := approval.NewGrants()
	g.Quorum = map[string]int{"refund": 3}
	c := approval.CallInfo{Tool: "refund", Input: `{"order":"A-1001"}`, RunID: "run-7"}
	g.Decide(t.Context(), c)
	if _, err := g.Reply(g.Requests()[0].ID, approval.Reply{Decision: approval.Approved, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"alice\u200b", "ali\u00adce", "\u2060alice", "alic\u034fe", "alice\ufe0f", "ALICE"} {
		if _, err := g.Reply(g.Requests()[0].ID, approval.Reply{Decision: approval.Approved, By: by}); !errors.Is(err, approval.ErrAlreadyVoted) {
			t.Errorf("%q voted again: %v", by, err)
		}
		if approval.Voter(by) != "alice" {
			t.Errorf("Voter(%q) = %q", by, approval.Voter(by))
		}
	}
	if n := len(g.Requests()[0].Votes); n != 1 {
		t.Fatalf("%d votes", n)
	}
}
