package inbox

import (
	"net/http"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/approval"
)

func TestATokenExpires(t *testing.T) {
	h, err := New(Memory(approval.NewGrants()), func(_ *http.Request) (string, bool) { return "alice", true })
	if err != nil {
		t.Fatal(err)
	}
	issued := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tok := h.token("alice", "1.abc", issued)
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{issued, true},
		{issued.Add(TokenTTL), true},
		{issued.Add(TokenTTL + time.Second), false},
		{issued.Add(-2 * time.Minute), false}, // issued in the future
	} {
		if got := h.validToken(tok, "alice", "1.abc", c.at); got != c.want {
			t.Errorf("at %v: %v, want %v", c.at.Sub(issued), got, c.want)
		}
	}
	if h.validToken(tok, "alice", "1.abd", issued) || h.validToken(tok, "alicf", "1.abc", issued) {
		t.Error("a token covered another request or user")
	}
}
